#!/usr/bin/env bash
# Writes the wheels of pytest-mcp-cassette (docs/pytest.md, "Wheels") into target/wheels/ (or
# --out): a platform wheel that bundles the native binary as <name>.data/scripts/mcp-cassette,
# installed next to `python` as ruff's and uv's wheels do, and the pure py3-none-any wheel of the
# plugin alone. The writer is the package's own stdlib-only build backend, so `pip install
# python/pytest-mcp-cassette` and these wheels come from one piece of code.
#
#   scripts/package-wheel.sh                          build this machine's release binary, wrap it
#   scripts/package-wheel.sh --binary path/to/mcp-cassette [--platform-tag manylinux_2_17_x86_64]
#                                                     wrap a binary built elsewhere; the platform
#                                                     tag is read from its header unless given
#   --out <dir>                                       where the wheels go (default target/wheels)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/target/wheels"
binary=""
tag=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --platform-tag) tag=(--platform-tag "$2"); shift 2 ;;
    *) echo "package-wheel: unknown argument $1" >&2; exit 2 ;;
  esac
done

project="$root/python/pytest-mcp-cassette"
cargo_version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
wheel_version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$project/pyproject.toml" | head -n 1)"
if [ "$cargo_version" != "$wheel_version" ]; then
  echo "package-wheel: pyproject.toml says $wheel_version, Cargo.toml says $cargo_version" >&2
  exit 1
fi

if [ -z "$binary" ]; then
  (cd "$root" && cargo build --release --locked)
  binary="$root/target/release/mcp-cassette"
fi
[ -f "$binary" ] || { echo "package-wheel: no binary at $binary" >&2; exit 1; }

python3 "$project/_backend/wheel_backend.py" --out "$out" --binary "$binary" "${tag[@]}"
python3 "$project/_backend/wheel_backend.py" --out "$out"
