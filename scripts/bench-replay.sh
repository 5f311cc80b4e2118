#!/usr/bin/env bash
# Whole-process benchmarks of `mcp-cassette replay` (release build), against the targets in
# docs/replay.md:
#   - cold start: a client spawning the replay, sending initialize + tools/list and exiting,
#     against the same client and a null responder (interleaved rounds, medians);
#   - throughput on 5000 recorded tools/call, pipelined and sequential, against a null responder
#     and a plain line echo (`cat`) over the same pipes (examples/bench_client.rs);
#   - peak RSS serving those 5000 calls, against 2x the cassette size + 10 MiB (/usr/bin/time -v).
# Usage: scripts/bench-replay.sh [count] [runs] [cold rounds]   (defaults 5000, 15 and 500).
# Prints the machine first.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT="${1:-5000}"
RUNS="${2:-15}"
COLD_ROUNDS="${3:-500}"

[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }

source scripts/bench-setup.sh
# The cold-start figure assumes startup.order still names this binary's functions; it is only a
# layout hint (nothing else depends on it), so a stale one is reported, not fatal.
scripts/startup-order.sh --check || echo "warning: cold start is measured without a current startup.order" >&2
machine

echo "== cassettes"
"$CLIENT" --pipelined --count "$COUNT" --initialize -- \
  "$BIN" record -o "$WORK/calls.jsonl" -- "$SERVER" echo-bench >/dev/null
"$CLIENT" --cold -- "$BIN" record -o "$WORK/small.jsonl" -- "$SERVER" echo-bench >/dev/null
"$CLIENT" --print-requests --count "$COUNT" --initialize > "$WORK/requests.jsonl"
SIZE=$(stat -c %s "$WORK/calls.jsonl")
echo "calls.jsonl: $SIZE bytes ($COUNT tools/call); small.jsonl: $(stat -c %s "$WORK/small.jsonl") bytes"

echo "== cold start (initialize + tools/list, then exit; $COLD_ROUNDS interleaved rounds)"
# A run is the whole client process: spawned, it spawns the responder, sends initialize,
# notifications/initialized and tools/list, reads the answers, closes stdin and waits for the
# responder to exit. Rounds alternate between the two responders in a shuffled order, so a noisy
# neighbour on a shared machine slows both alike (hyperfine's back-to-back batches could not
# tell a 1.15x from a 1.4x here); the ratio is taken between medians, and per block of rounds
# to show its spread.
python3 - "$COLD_ROUNDS" "$CLIENT" "$BIN" "$SERVER" "$WORK/small.jsonl" <<'EOF_COLD'
import os, random, statistics, sys, time
rounds, client, binary, server, cassette = int(sys.argv[1]), *sys.argv[2:]
commands = {
    "replay": [client, "--cold", "--", binary, "replay", cassette],
    "null": [client, "--cold", "--", server, "null"],
}
devnull = os.open(os.devnull, os.O_WRONLY)
times = {name: [] for name in commands}
for r in range(rounds + 10):
    order = list(commands.items())
    random.shuffle(order)
    for name, argv in order:
        start = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
        _, status = os.waitpid(pid, 0)
        elapsed = time.perf_counter_ns() - start
        if status != 0:
            sys.exit(f"{name} failed: status {status}")
        if r >= 10:  # warm-up rounds are not counted
            times[name].append(elapsed / 1e6)
def med(v): return statistics.median(v)
block = max(1, rounds // 5)
ratios = [med(times["replay"][i:i + block]) / med(times["null"][i:i + block]) for i in range(0, rounds - block + 1, block)]
for name, v in times.items():
    q = statistics.quantiles(v, n=4)
    print(f"{name:<7} median {med(v):.3f} ms (quartiles {q[0]:.3f}..{q[2]:.3f})")
print(f"cold start: replay/null {med(times['replay']) / med(times['null']):.3f} (target <= 1.2); "
      f"per block of {block} rounds: " + " ".join(f"{x:.2f}" for x in ratios))
EOF_COLD

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
