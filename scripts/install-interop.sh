#!/usr/bin/env bash
# Installs the real third-party MCP software the interop tests drive, at pinned versions:
# npm packages from interop/package-lock.json, the Python SDK and pytest from
# interop/requirements.txt, the vitest and jest the adapter specs run under from
# interop/adapters/package-lock.json, and the repository's own pytest plugin
# (python/pytest-mcp-cassette) into the same venv.
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
# The plugin is built by its own stdlib-only backend: no network, no setuptools. Reinstalled when
# any of its files is newer than the last install.
plugin=../python/pytest-mcp-cassette
stamp=.venv/pytest-mcp-cassette.installed
if [ ! -f "$stamp" ] || [ -n "$(find "$plugin" -type f -not -path "*/__pycache__/*" -newer "$stamp" -print -quit)" ]; then
  .venv/bin/pip install --quiet --disable-pip-version-check --no-deps --no-index \
    --force-reinstall "$plugin"
  touch "$stamp"
fi
(
  cd adapters
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
    npm ci --no-audit --no-fund --loglevel=error
    touch node_modules
  fi
)
