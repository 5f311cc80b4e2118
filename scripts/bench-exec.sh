#!/usr/bin/env bash
# What `mcp-cassette exec` adds to the command it wraps, against the target in docs/exec.md
# (at most 20 ms): hyperfine compares
#   - `exec --cassette <HTTP cassette> -- true` with `true` (the cassette read, served in-process
#     on a free port, the command run, the summary);
#   - `exec --cassette <stdio cassette> -- true` with `true` (the report directory made and
#     removed, no replay started);
#   - a stdio replay spawned through `sh -c "$MCP_CASSETTE_COMMAND"` under exec, with the same
#     replay spawned directly (what exec adds when the command does use the cassette).
# The added time is the difference of the means. Prints the machine first.
# Usage: scripts/bench-exec.sh [runs]   (default 200). Needs hyperfine (apt-get install -y
# hyperfine) and a release build (made here; MCP_CASSETTE_BINARY overrides it).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-200}"
command -v hyperfine >/dev/null || { echo "bench-exec: hyperfine is not installed (apt-get install -y hyperfine)" >&2; exit 2; }

if [ -z "${MCP_CASSETTE_BINARY:-}" ]; then
  cargo build --release --quiet --bin mcp-cassette
  MCP_CASSETTE_BINARY="$PWD/target/release/mcp-cassette"
fi
BIN="$MCP_CASSETTE_BINARY"
HTTP="$PWD/tests/fixtures/reference/reference-0.4/tape.http.jsonl"
STDIO="$PWD/tests/fixtures/reference/corpus-0.4/tiny.cassette.jsonl"

echo "machine: $(uname -srm); $(nproc) CPU(s): $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
echo "binary: $BIN ($("$BIN" --version))"

# Every exec run reports its unused recordings on stderr: not what is measured.
hyperfine --warmup 10 --runs "$RUNS" --shell=none --output=null \
  -n 'true' 'true' \
  -n 'exec (HTTP cassette) -- true' "$BIN exec --cassette $HTTP -- true" \
  -n 'exec (stdio cassette) -- true' "$BIN exec --cassette $STDIO -- true"

hyperfine --warmup 10 --runs "$RUNS" --output=null \
  -n 'replay spawned directly' "$BIN replay $STDIO </dev/null" \
  -n 'replay spawned under exec' "$BIN exec --cassette $STDIO -- sh -c 'sh -c \"\$MCP_CASSETTE_COMMAND\" </dev/null'"
