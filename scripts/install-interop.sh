#!/usr/bin/env bash
# Installs the real third-party MCP software the interop tests drive, at pinned versions:
# npm packages from interop/package-lock.json, the Python SDK from interop/requirements.txt, and
# the vitest and jest the adapter specs run under from interop/adapters/package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/../interop"

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
  npm ci --no-audit --no-fund --loglevel=error
  touch node_modules
fi
if [ ! -x .venv/bin/python ] || [ requirements.txt -nt .venv ]; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
  touch .venv
fi
(
  cd adapters
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
    npm ci --no-audit --no-fund --loglevel=error
    touch node_modules
  fi
)
