#!/usr/bin/env bash
# Whole-process benchmarks of `mcp-cassette replay` (release build), against the targets in
# docs/replay.md:
#   - cold start: a client spawning the replay, sending initialize + tools/list and exiting,
#     against the same client and a null responder (hyperfine);
#   - throughput on 5000 recorded tools/call, pipelined and sequential, against a null responder
#     and a plain line echo (`cat`) over the same pipes (examples/bench_client.rs);
#   - peak RSS serving those 5000 calls, against 2x the cassette size + 10 MiB (/usr/bin/time -v).
# Usage: scripts/bench-replay.sh [count] [runs]   (defaults 5000 and 15). Prints the machine first.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT="${1:-5000}"
RUNS="${2:-15}"

command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }

cargo build --release --quiet --bin mcp-cassette --example bench_client --example fixture_server
BIN="$PWD/target/release/mcp-cassette"
CLIENT="$PWD/target/release/examples/bench_client"
SERVER="$PWD/target/release/examples/fixture_server"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "== machine"
echo "nproc: $(nproc)"
lscpu | head -20
uptime

echo "== cassettes"
"$CLIENT" --pipelined --count "$COUNT" --initialize -- \
  "$BIN" record -o "$WORK/calls.jsonl" -- "$SERVER" echo-bench >/dev/null
"$CLIENT" --cold -- "$BIN" record -o "$WORK/small.jsonl" -- "$SERVER" echo-bench >/dev/null
"$CLIENT" --print-requests --count "$COUNT" --initialize > "$WORK/requests.jsonl"
SIZE=$(stat -c %s "$WORK/calls.jsonl")
echo "calls.jsonl: $SIZE bytes ($COUNT tools/call); small.jsonl: $(stat -c %s "$WORK/small.jsonl") bytes"

echo "== cold start (initialize + tools/list, then exit)"
hyperfine -N --warmup 10 --runs 200 --export-json "$WORK/cold.json" \
  -n replay "$CLIENT --cold -- $BIN replay $WORK/small.jsonl" \
  -n null "$CLIENT --cold -- $SERVER null"
python3 - "$WORK/cold.json" <<'EOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
replay, null = r["replay"]["mean"], r["null"]["mean"]
print(f"cold start: replay {replay*1000:.2f} ms, null {null*1000:.2f} ms, ratio {replay/null:.2f} (target <= 1.2)")
EOF

echo "== throughput ($COUNT tools/call; $RUNS interleaved runs each, medians)"
# Runs alternate between the three responders so that a noisy neighbour on a shared machine
# slows all of them alike; the ratio is taken between medians.
for mode in pipelined sequential; do
  for run in $(seq "$RUNS"); do
    for target in replay null cat; do
      case "$target" in
        replay) cmd=("$BIN" replay "$WORK/calls.jsonl") ;;
        null) cmd=("$SERVER" null) ;;
        cat) cmd=(cat) ;;
      esac
      printf '%s %s ' "$mode" "$target"
      "$CLIENT" "--$mode" --count "$COUNT" --initialize -- "${cmd[@]}"
    done
  done
done > "$WORK/throughput.txt"
python3 - "$WORK/throughput.txt" <<'EOF2'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    mode, target, result = line.split(" ", 2)
    runs.setdefault((mode, target), []).append(json.loads(result)["rps"])
for mode in ("pipelined", "sequential"):
    med = {t: statistics.median(runs[(mode, t)]) for t in ("replay", "null", "cat")}
    lo, hi = min(runs[(mode, "replay")]), max(runs[(mode, "replay")])
    print(f"{mode:<10} replay {med['replay']:>10,.0f} req/s (runs {lo:,.0f}..{hi:,.0f}); "
          f"null {med['null']:>10,.0f}; cat {med['cat']:>10,.0f}; "
          f"replay/null {med['replay']/med['null']:.2f}, replay/cat {med['replay']/med['cat']:.2f}")
EOF2

echo "== peak RSS serving $COUNT calls"
/usr/bin/time -v "$BIN" replay "$WORK/calls.jsonl" < "$WORK/requests.jsonl" > /dev/null 2> "$WORK/time.txt"
RSS_KB=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
LIMIT_KB=$(( (2 * SIZE + 10 * 1024 * 1024) / 1024 ))
echo "peak RSS: ${RSS_KB} KiB; limit 2 x cassette + 10 MiB = ${LIMIT_KB} KiB"
