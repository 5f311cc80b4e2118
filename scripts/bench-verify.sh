#!/usr/bin/env bash
# Whole-process benchmark of `mcp-cassette verify` (release build), against the target in
# docs/verify.md: verifying a 5,000-call cassette takes at most 1.1x the time a direct client takes
# to make the same 5,000 calls, one at a time, against the same server; and verify's memory stays
# bounded by the cassette's text.
#
#   - the cassette: 5,000 `tools/call echo` recorded by `mcp-cassette record` from the
#     `echo-bench` fixture server, driven by examples/bench_client.rs (sequential, with the
#     handshake). Its answers are the server's own, so every pair is MATCH and the run measures
#     the whole path (read, pair, fire, parse, normalise, diff, report). The cassettes of the
#     generator (examples/gen_cassette.rs) are not used: no live server
#     gives their answers, and a run where every pair is CHANGED measures the report, not verify;
#   - hyperfine, interleaved runs: `verify calls.jsonl -- fixture_server echo-bench` against
#     `bench_client --sequential --count N --initialize -- fixture_server echo-bench` (the
#     direct client of the target, which reads each answer line and nothing more) and the same
#     with `--check` (each answer parsed and its id checked, as a client that uses them must:
#     docs/verify.md says why both are reported);
#   - peak RSS of verify (/usr/bin/time -v) next to the cassette's size.
# Usage: scripts/bench-verify.sh [count] [runs]   (defaults 5000 and 15). Prints the machine first.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT="${1:-5000}"
RUNS="${2:-15}"

command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 2; }
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }

source scripts/bench-setup.sh
machine

echo "== cassette"
"$CLIENT" --sequential --count "$COUNT" --initialize -- \
  "$BIN" record -o "$WORK/calls.jsonl" -- "$SERVER" echo-bench >/dev/null
SIZE=$(stat -c %s "$WORK/calls.jsonl")
echo "calls.jsonl: $SIZE bytes ($COUNT tools/call)"

# A sanity run: every pair must match, or the timing below measures something else.
"$BIN" verify "$WORK/calls.jsonl" -- "$SERVER" echo-bench | tail -n 1
"$BIN" verify "$WORK/calls.jsonl" -- "$SERVER" echo-bench >/dev/null \
  || { echo "verify did not pass on its own recording" >&2; exit 1; }

echo "== time: verify vs a direct client, $COUNT sequential calls ($RUNS runs each)"
hyperfine --warmup 2 --runs "$RUNS" --export-json "$WORK/hyperfine.json" \
  -n verify "'$BIN' verify '$WORK/calls.jsonl' -- '$SERVER' echo-bench" \
  -n direct "'$CLIENT' --sequential --count $COUNT --initialize -- '$SERVER' echo-bench" \
  -n checking "'$CLIENT' --sequential --check --count $COUNT --initialize -- '$SERVER' echo-bench"
python3 - "$WORK/hyperfine.json" <<'EOF_RATIO'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
v, d, c = results["verify"], results["direct"], results["checking"]
print(f"verify/direct (medians): {v['median'] / d['median']:.3f} (target <= 1.1); "
      f"verify {v['median'] * 1000:.1f} ms, direct {d['median'] * 1000:.1f} ms")
print(f"verify/checking client (medians): {v['median'] / c['median']:.3f}; "
      f"checking client {c['median'] * 1000:.1f} ms")
EOF_RATIO

echo "== memory: verify's peak RSS"
/usr/bin/time -v "$BIN" verify "$WORK/calls.jsonl" -- "$SERVER" echo-bench 2>"$WORK/time.txt" >/dev/null
RSS_KB=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$WORK/time.txt")
echo "peak RSS: $RSS_KB KiB for a $SIZE-byte cassette ($(( RSS_KB * 1024 / SIZE ))x its size)"
