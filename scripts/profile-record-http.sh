#!/usr/bin/env bash
# Instructions per request of `record --http`, per thread, under callgrind (issue 13's capture
# and forwarding costs; a figure the machine's load does not move, unlike the wall ratio of
# scripts/bench-record-http.sh). Two drives of N and 2N `tools/call` at 16 connections
# (examples/bench_http.rs) through the proxy to the instant upstream; the difference of each
# thread's count, divided by N, is what one request costs it, start-up and shutdown cancelled.
#
#   scripts/profile-record-http.sh [count] [binary]   (defaults 3000 and the release build)
#
# RELAY=1 profiles examples/bare_http_relay.rs instead, the floor `record` is measured against.
#
# Threads are numbered as callgrind numbers them: 1 runs the proxy (the async runtime), the
# largest number the capture thread (parsing, redaction, writing the cassette).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-3000}
cargo build --release --locked --quiet --bin mcp-cassette --example bench_http --example bare_http_relay
bin=${2:-target/release/mcp-cassette}
ex=target/release/examples
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; }
tmp=$(mktemp -d)
upstream_pid=
trap '[ -n "$upstream_pid" ] && kill "$upstream_pid" 2>/dev/null; rm -rf "$tmp"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 400); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }

up=$(free_port)
"$ex/bench_http" serve "127.0.0.1:$up" 2>/dev/null &
upstream_pid=$!
wait_port "$up"

# One drive of $1 calls through a proxy under callgrind; the counts go to $tmp/$2.<pid>-<thread>.
drive() {
  local port; port=$(free_port)
  local proxy_command=("$bin" record --http "http://127.0.0.1:$up/mcp"
    --listen "127.0.0.1:$port" -o "$tmp/$2.jsonl")
  [ -n "${RELAY:-}" ] && proxy_command=("$ex/bare_http_relay" "127.0.0.1:$port" "http://127.0.0.1:$up/mcp")
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$tmp/$2.%p" \
    "${proxy_command[@]}" 2>"$tmp/$2.log" &
  local proxy=$!
  wait_port "$port"
  "$ex/bench_http" drive "http://127.0.0.1:$port/" --count "$1" --concurrency 16 >/dev/null
  kill -TERM "$proxy"
  wait "$proxy" || true
}
drive "$count" one
drive $((2 * count)) two

python3 - "$tmp" "$count" <<'EOF'
import glob, re, sys
tmp, count = sys.argv[1], int(sys.argv[2])
def totals(run):
    out = {}
    for path in glob.glob(f"{tmp}/{run}.*-*"):
        thread = int(path.rsplit("-", 1)[1])
        out[thread] = int(re.search(r"^totals: (\d+)", open(path).read(), re.M).group(1))
    return out
one, two = totals("one"), totals("two")
for thread in sorted(set(one) & set(two)):
    print(f"thread {thread}: {(two[thread] - one[thread]) / count:,.0f} instructions a request")
EOF
