#!/usr/bin/env bash
# record --http overhead (issue 13): latency added per request by the recording proxy, against a
# bare hyper reverse proxy that captures nothing, sequential and concurrent; peak RSS of both.
# Release build; numbers go to docs/benchmarks.md by hand, with the machine they were taken on.
#
#   scripts/bench-record-http.sh [runs] [count]   (CONCURRENCY="16" runs only the concurrent mode)
#
# BASELINE=<another build of mcp-cassette> times that build's `record` too, in the same rounds,
# for an A/B of a change against the relay and each other. CONTROL=1 also times the bare relay
# with one idle extra thread (`bare_http_relay --idle-thread`): what a second thread in the
# process costs by its mere existence, a floor for any recorder that captures on a thread.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
count=${2:-5000}
cargo build --release --locked --bins >/dev/null 2>&1
cargo build --release --locked --examples >/dev/null 2>&1
bin=target/release/mcp-cassette
ex=target/release/examples
tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { python3 -c "import json,sys; print(json.load(sys.stdin)[\"$1\"])"; }
wait_port() { for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }

# The upstream: answers every request at once (examples/bench_http.rs), so the proxies are all
# the work there is on the path.
up_port=$(free_port)
"$ex/bench_http" serve "127.0.0.1:$up_port" 2>/dev/null &
pids+=($!)
wait_port "$up_port"
upstream="http://127.0.0.1:$up_port/mcp"

# Starts a proxy (`bare`, `record` or `baseline`) on a fresh port; sets $proxy_pid and $proxy_url.
start_proxy() {
  local port; port=$(free_port)
  if [ "$1" = bare ]; then
    "$ex/bare_http_relay" "127.0.0.1:$port" "$upstream" 2>/dev/null &
  elif [ "$1" = control ]; then
    "$ex/bare_http_relay" "127.0.0.1:$port" "$upstream" --idle-thread 2>/dev/null &
  else
    local which=$bin
    [ "$1" = baseline ] && which=$BASELINE
    rm -f "$tmp/r.jsonl"
    "$which" record --http "$upstream" --listen "127.0.0.1:$port" -o "$tmp/r.jsonl" 2>/dev/null &
  fi
  proxy_pid=$!
  pids+=("$proxy_pid")
  wait_port "$port"
  proxy_url="http://127.0.0.1:$port/"
}
stop_proxy() { kill -TERM "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true; }

# Each run times the same client three ways, interleaved so that drift in the machine's state
# hits all three alike: straight to the upstream, through the bare relay, through `record`.
# Added latency per request = (through a proxy − direct) / requests.
for concurrency in ${CONCURRENCY:-1 16}; do
  d=(); r=(); p=(); b=(); c=()
  for _ in $(seq "$runs"); do
    d+=("$("$ex/bench_http" drive "$upstream" --count "$count" --concurrency "$concurrency" | field seconds)")
    start_proxy bare
    r+=("$("$ex/bench_http" drive "$proxy_url" --count "$count" --concurrency "$concurrency" | field seconds)")
    stop_proxy
    start_proxy record
    p+=("$("$ex/bench_http" drive "$proxy_url" --count "$count" --concurrency "$concurrency" | field seconds)")
    stop_proxy
    if [ -n "${BASELINE:-}" ]; then
      start_proxy baseline
      b+=("$("$ex/bench_http" drive "$proxy_url" --count "$count" --concurrency "$concurrency" | field seconds)")
      stop_proxy
    fi
    if [ -n "${CONTROL:-}" ]; then
      start_proxy control
      c+=("$("$ex/bench_http" drive "$proxy_url" --count "$count" --concurrency "$concurrency" | field seconds)")
      stop_proxy
    fi
  done
  dm=$(printf '%s\n' "${d[@]}" | median); rm_=$(printf '%s\n' "${r[@]}" | median); pm=$(printf '%s\n' "${p[@]}" | median)
  python3 -c "
d, r, p, n = $dm, $rm_, $pm, $count
mode = 'sequential' if $concurrency == 1 else 'concurrent ($concurrency)'
print(f'{mode:<16} {n} tools/call, median of $runs: direct {d*1000:.1f} ms, bare relay {r*1000:.1f} ms, record {p*1000:.1f} ms')
print(f'{\"\":<16} added per request: bare relay {(r-d)/n*1e6:.1f} us, record {(p-d)/n*1e6:.1f} us; record/relay added {(p-d)/max(r-d,1e-9):.2f}x (target <= 1.10)')
"
  if [ -n "${BASELINE:-}" ]; then
    bm=$(printf '%s\n' "${b[@]}" | median)
    python3 -c "
d, r, b, n = $dm, $rm_, $bm, $count
print(f'{\"\":<16} baseline: record {b*1000:.1f} ms, added {(b-d)/n*1e6:.1f} us; baseline/relay added {(b-d)/max(r-d,1e-9):.2f}x')
"
  fi
  if [ -n "${CONTROL:-}" ]; then
    cm=$(printf '%s\n' "${c[@]}" | median)
    python3 -c "
d, r, c, n = $dm, $rm_, $cm, $count
print(f'{\"\":<16} control: relay with an idle thread {c*1000:.1f} ms, added {(c-d)/n*1e6:.1f} us; control/relay added {(c-d)/max(r-d,1e-9):.2f}x')
"
  fi
done

# Peak RSS of each proxy over a concurrent session (target for record: <= 15 MiB).
for which in bare record; do
  port=$(free_port)
  rm -f "$tmp/r.jsonl"
  if [ "$which" = bare ]; then
    /usr/bin/time -v "$ex/bare_http_relay" "127.0.0.1:$port" "$upstream" 2>"$tmp/time.$which" &
  else
    /usr/bin/time -v "$bin" record --http "$upstream" --listen "127.0.0.1:$port" -o "$tmp/r.jsonl" 2>"$tmp/time.$which" &
  fi
  timer=$!
  wait_port "$port"
  "$ex/bench_http" drive "http://127.0.0.1:$port/" --count "$count" --concurrency 16 >/dev/null
  # Signal the proxy itself, not /usr/bin/time, which waits for it and then reports.
  kill -TERM "$(pgrep -P "$timer")"
  wait "$timer" || true
  echo "$which peak RSS: $(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.$which") KiB"
done
