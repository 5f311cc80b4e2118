#!/usr/bin/env bash
# Record overhead and codec throughput (issue: foundation). Release build; numbers go to
# docs/benchmarks.md by hand, with the machine they were taken on.
#
#   scripts/bench-record.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
cargo build --release --locked --bins --examples >/dev/null 2>&1
bin=target/release/mcp-cassette
ex=target/release/examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() { python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"])'; }

for mode in sequential pipelined; do
  d=(); p=()
  for i in $(seq "$runs"); do
    d+=("$("$ex/bench_client" --$mode --count 5000 --initialize -- "$ex/fixture_server" echo-bench | secs)")
    rm -f "$tmp/r.jsonl"
    p+=("$("$ex/bench_client" --$mode --count 5000 --initialize -- "$bin" record -o "$tmp/r.jsonl" -- "$ex/fixture_server" echo-bench | secs)")
  done
  dm=$(printf '%s\n' "${d[@]}" | median); pm=$(printf '%s\n' "${p[@]}" | median)
  python3 -c "print(f'record {\"$mode\":<10} 5000 tools/call: direct {$dm*1000:.1f} ms, through record {$pm*1000:.1f} ms, ratio {$pm/$dm:.3f}')"
done

# Peak RSS of the proxy for the whole pipelined session.
"$ex/bench_client" --print-requests --count 5000 --initialize > "$tmp/requests.jsonl"
rm -f "$tmp/r.jsonl"
/usr/bin/time -f "record peak RSS: %M KiB" "$bin" record -o "$tmp/r.jsonl" -- "$ex/fixture_server" echo-bench \
  < "$tmp/requests.jsonl" > /dev/null

# Codec: write, read and rewrite a 300 MB cassette; peak RSS of the read.
"$ex/bench_codec" gen "$tmp/c.jsonl" 300
/usr/bin/time -f "codec read peak RSS: %M KiB" "$ex/bench_codec" read "$tmp/c.jsonl"
"$ex/bench_codec" copy "$tmp/c.jsonl" "$tmp/c2.jsonl"
cmp "$tmp/c.jsonl" "$tmp/c2.jsonl" && echo "codec copy is byte-identical"
