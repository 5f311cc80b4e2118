#!/usr/bin/env bash
# Whole-process benchmarks of `mcp-cassette replay --listen` (release build), against the targets
# in docs/http.md ("Replay server") and issue 13:
#   - throughput: wrk, 64 keep-alive connections, every request a `ping` (synthesized), then a
#     recorded `tools/list` (answered from the recording every time) — target >= 50,000 req/s;
#   - many sessions: examples/http_sessions.rs, 1,000 concurrent client sessions, each its own
#     pass through a sessioned recording (initialize, then CALLS tools/call, one every
#     INTERVAL_MS per session: 10,000 requests/s offered at the defaults) — target p99 <= 5 ms
#     per answer;
#   - peak RSS of the server over the sessions run (/usr/bin/time -v) — target <= 2x the cassette
#     + 20 MiB.
# When REFERENCE names the reference tool's command (e.g. REFERENCE="npx mcp-cassette"), the wrk
# ping run is repeated against its `replay --listen` in the same run, for the 5x comparison.
# Usage: scripts/bench-replay-http.sh [sessions] [calls] [seconds]   (defaults 1000, 20, 10).
# Prints the machine first. Do not run it on a machine others are compiling on: the figures
# would measure them.
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS="${1:-1000}"
CALLS="${2:-20}"
SECONDS_RUN="${3:-10}"
CONNECTIONS=64
WRK_THREADS="${WRK_THREADS:-1}"
INTERVAL_MS="${INTERVAL_MS:-100}"

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq wrk
  else
    echo "wrk is not installed: sudo apt-get install wrk (Debian package \"wrk\")" >&2
    exit 2
  fi
fi
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }
# 1,000 sessions hold up to 1,000 connections on each side.
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true

cargo build --release --quiet --bin mcp-cassette
cargo build --release --quiet --example http_sessions
BIN="$PWD/target/release/mcp-cassette"
DRIVER="$PWD/target/release/examples/http_sessions"
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== machine"
echo "nproc: $(nproc)"
lscpu | head -20
uptime
wrk --version 2>&1 | head -1 || true

echo "== cassettes"
# A legacy HTTP recording: initialize, notifications/initialized, tools/list, CALLS tools/call.
# sessioned.jsonl says the server minted session ids (one pass per client session);
# shared.jsonl does not (one current pass, as a recording of a stateless server).
python3 - "$WORK" "$CALLS" <<'EOF_GEN'
import json, sys
work, calls = sys.argv[1], int(sys.argv[2])
tools = [{"name": "echo", "description": "Echoes its arguments back.",
          "inputSchema": {"type": "object", "properties": {"i": {"type": "integer"}}}}]
tools += [{"name": f"tool-{n}", "description": f"Fixture tool number {n}.",
           "inputSchema": {"type": "object"}} for n in range(20)]
def lines(sessioned):
    header = {"type": "header", "cassetteVersion": 2, "recorder": "mcp-cassette@bench",
              "startedAt": "2026-12-01T00:00:00Z", "transport": "http",
              "url": "http://127.0.0.1:9/mcp", "era": "legacy", "redaction": {"applied": True}}
    if sessioned:
        header["sessioned"] = True
    out = [header]
    t = 0
    def frame(direction, f):
        nonlocal t
        t += 1
        out.append({"type": "frame", "t": t, "dir": direction, "frame": f})
    frame("c2s", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    frame("s2c", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}}, "serverInfo": {"name": "bench", "version": "1"}}})
    frame("c2s", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    frame("c2s", {"jsonrpc": "2.0", "id": "l", "method": "tools/list", "params": {}})
    frame("s2c", {"jsonrpc": "2.0", "id": "l", "result": {"tools": tools}})
    for k in range(calls):
        frame("c2s", {"jsonrpc": "2.0", "id": k + 1, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"i": k}}})
        frame("s2c", {"jsonrpc": "2.0", "id": k + 1, "result": {
            "content": [{"type": "text", "text": f"echo {k} " + "x" * 200}]}})
    return out
for name, sessioned in (("sessioned.jsonl", True), ("shared.jsonl", False)):
    with open(f"{work}/{name}", "w") as f:
        for line in lines(sessioned):
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
EOF_GEN
SIZE=$(stat -c %s "$WORK/sessioned.jsonl")
echo "sessioned.jsonl: $SIZE bytes ($CALLS tools/call); RSS target: $(( (2 * SIZE) / 1024 + 20 * 1024 )) KiB"

# Starts `$@` (a replay --listen 127.0.0.1:0) in the background under /usr/bin/time -v, stderr to
# $WORK/server.err, and sets SERVER_PID and URL from the one `serving … at <url>` line.
start_server() {
  : > "$WORK/server.err"
  /usr/bin/time -v "$@" 2> "$WORK/server.err" &
  SERVER_PID=$!
  URL=""
  for _ in $(seq 1 200); do
    URL=$(sed -n 's/^.* server at \(http:[^ ]*\)$/\1/p' "$WORK/server.err" | head -1)
    [ -n "$URL" ] && return 0
    sleep 0.05
  done
  echo "the server printed no URL:" >&2
  cat "$WORK/server.err" >&2
  exit 1
}

stop_server() {
  # SIGTERM to the replay itself (GNU time does not pass signals on): it shuts down, reports,
  # and time then writes its figures.
  local child
  child=$(pgrep -P "$SERVER_PID" | head -1)
  kill -TERM "${child:-$SERVER_PID}"
  wait "$SERVER_PID" || true
  SERVER_PID=""
}

echo "== throughput: wrk, $CONNECTIONS connections, ${SECONDS_RUN}s, $WRK_THREADS thread(s)"
start_server "$BIN" replay "$WORK/shared.jsonl" --listen 127.0.0.1:0
for method in ping tools/list; do
  echo "-- $method"
  BENCH_METHOD="$method" wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${SECONDS_RUN}s" --latency \
    -s scripts/bench-replay-http.lua "$URL"
done
stop_server
grep -E "Maximum resident set size" "$WORK/server.err" || true

if [ -n "${REFERENCE:-}" ]; then
  echo "== reference: wrk ping, $CONNECTIONS connections"
  # shellcheck disable=SC2086
  start_server $REFERENCE replay "$WORK/shared.jsonl" --listen 127.0.0.1:0
  BENCH_METHOD=ping wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${SECONDS_RUN}s" --latency \
    -s scripts/bench-replay-http.lua "$URL"
  stop_server
fi

echo "== $SESSIONS concurrent sessions x (initialize + initialized + $CALLS tools/call, ${INTERVAL_MS} ms apart)"
start_server "$BIN" replay "$WORK/sessioned.jsonl" --listen 127.0.0.1:0
"$DRIVER" "$URL" "$SESSIONS" "$CALLS" "$INTERVAL_MS"
stop_server
grep -E "session\(s\) served|miss|Maximum resident set size|Elapsed" "$WORK/server.err" || true
RSS_KB=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/server.err")
echo "peak RSS: ${RSS_KB} KiB; target <= $(( (2 * SIZE) / 1024 + 20 * 1024 )) KiB"
