#!/usr/bin/env bash
# Record overhead and codec throughput (issue: foundation). Release build; numbers go to
# docs/benchmarks.md by hand, with the machine they were taken on.
#
#   scripts/bench-record.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
# The binary alone, as users build it: built with the examples, the dev-dependencies change
# feature unification and so every symbol name, and startup.order (build.rs) no longer applies.
cargo build --release --locked --bins >/dev/null 2>&1
cargo build --release --locked --examples >/dev/null 2>&1
bin=target/release/mcp-cassette
ex=target/release/examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() { python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"])'; }

# Each run times the same client three ways, interleaved so that drift in the machine's state
# hits all three alike: straight to the server, through a bare two-thread relay that captures
# nothing (examples/bare_relay.rs: the floor for any process on the path), and through
# `record`. Servers: our Rust echo fixture (no work per call, so the pipes are all there is)
# and, when interop/ is installed, the official Node.js server-everything.
servers=("$ex/fixture_server echo-bench")
everything=interop/node_modules/.bin/mcp-server-everything
[ -x "$everything" ] && servers+=("$everything")
for server in "${servers[@]}"; do
  for mode in sequential pipelined; do
    d=(); r=(); p=()
    for i in $(seq "$runs"); do
      # shellcheck disable=SC2086 # the server command is split on purpose
      d+=("$("$ex/bench_client" --$mode --count 5000 --initialize -- $server 2>/dev/null | secs)")
      # shellcheck disable=SC2086
      r+=("$("$ex/bench_client" --$mode --count 5000 --initialize -- "$ex/bare_relay" $server 2>/dev/null | secs)")
      rm -f "$tmp/r.jsonl"
      # shellcheck disable=SC2086
      p+=("$("$ex/bench_client" --$mode --count 5000 --initialize -- "$bin" record -o "$tmp/r.jsonl" -- $server 2>/dev/null | secs)")
    done
    dm=$(printf '%s\n' "${d[@]}" | median); rm_=$(printf '%s\n' "${r[@]}" | median); pm=$(printf '%s\n' "${p[@]}" | median)
    python3 -c "print(f'{\"$(basename "${server%% *}") ${server#* }\"[:28]:<28} {\"$mode\":<10} 5000 tools/call, median of $runs: direct {$dm*1000:.1f} ms, bare relay {$rm_*1000:.1f} ms, record {$pm*1000:.1f} ms; record/direct {$pm/$dm:.2f}, record/relay {$pm/$rm_:.2f}')"
  done
done

# Peak RSS of the proxy for the whole pipelined session.
"$ex/bench_client" --print-requests --count 5000 --initialize > "$tmp/requests.jsonl"
rm -f "$tmp/r.jsonl"
/usr/bin/time -f "record peak RSS: %M KiB" "$bin" record -o "$tmp/r.jsonl" -- "$ex/fixture_server" echo-bench \
  < "$tmp/requests.jsonl" > /dev/null
/usr/bin/time -f "bare relay peak RSS: %M KiB" "$ex/bare_relay" "$ex/fixture_server" echo-bench \
  < "$tmp/requests.jsonl" > /dev/null

# Codec: write, read and rewrite a 300 MB cassette; peak RSS of the read.
"$ex/bench_codec" gen "$tmp/c.jsonl" 300
/usr/bin/time -f "codec read peak RSS: %M KiB" "$ex/bench_codec" read "$tmp/c.jsonl"
"$ex/bench_codec" copy "$tmp/c.jsonl" "$tmp/c2.jsonl"
cmp "$tmp/c.jsonl" "$tmp/c2.jsonl" && echo "codec copy is byte-identical"
