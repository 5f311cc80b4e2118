#!/usr/bin/env bash
# Start-up of `mcp-cassette replay` on a large cassette (release build), against the targets in
# docs/replay.md and docs/benchmarks.md: the first answer of a 200,000-call cassette within
# 0.25 s, and peak memory within 2 x cassette + 10 MiB.
#
#   - the cassette: COUNT distinct `tools/call echo` (plus the handshake) recorded by
#     `mcp-cassette record` from the `echo-bench` fixture server, driven by
#     examples/bench_client.rs, pipelined: small lines, so the per-line cost of building the
#     index shows. A second cassette may be given as CASSETTE (e.g. the output of a realistic
#     generator) instead;
#   - time to the first answer: a Python driver spawns `replay`, writes `initialize` and times
#     the first line of stdout, over RUNS rounds; with BASELINE set to another binary, both are
#     run in each round in shuffled order (this VM's speed drifts within minutes, so only
#     interleaved runs compare two builds); with HUGEPAGES=1, the build is also run with glibc's
#     transparent huge pages for the heap (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), in the same
#     rounds; with REFERENCE set to the reference tool's command (e.g. "node <it>/dist/cli.js"),
#     it is run in the same rounds too, and the ratio of the medians printed;
#   - peak RSS (/usr/bin/time) given the first request only, and given every recorded request
#     (and the reference's given the first request only).
# Usage: scripts/bench-replay-large.sh [count] [runs]   (defaults 200000 and 15).
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT="${1:-200000}"
RUNS="${2:-15}"

[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }

source scripts/bench-setup.sh
machine

if [ -n "${CASSETTE:-}" ]; then
  CALLS="$CASSETTE"
else
  CALLS="$WORK/calls.jsonl"
  "$CLIENT" --pipelined --count "$COUNT" --initialize -- \
    "$BIN" record -o "$CALLS" -- "$SERVER" echo-bench >/dev/null
fi
SIZE=$(stat -c %s "$CALLS")
echo "== cassette: $CALLS, $SIZE bytes"

echo "== time to the first answer ($RUNS rounds)"
python3 - "$CALLS" "$RUNS" "$BIN" ${BASELINE:+"$BASELINE"} <<'EOF_DRIVER'
import os, random, shlex, subprocess, sys, time
cassette, runs, binaries = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
init = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        b'"capabilities":{},"clientInfo":{"name":"bench-client","version":"1.0.0"}}}\n')
# Each variant: a label, the binary and what it adds to the environment. HUGEPAGES=1 adds the
# first binary again with glibc's transparent huge pages for the heap (docs/replay.md).
variants = [(b, [b], {}) for b in binaries]
if os.environ.get("HUGEPAGES") == "1":
    variants.append((binaries[0] + " (glibc.malloc.hugetlb=1)", [binaries[0]],
                     {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}))
if os.environ.get("REFERENCE"):
    variants.append(("reference", shlex.split(os.environ["REFERENCE"]), {}))
times = {label: [] for label, _, _ in variants}
for _ in range(runs):
    order = variants[:]
    random.shuffle(order)
    for label, command, extra in order:
        start = time.perf_counter()
        p = subprocess.Popen(command + ["replay", cassette], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env={**os.environ, **extra})
        p.stdin.write(init)
        p.stdin.flush()
        line = p.stdout.readline()
        took = time.perf_counter() - start
        if not line.startswith(b'{"jsonrpc"'):
            sys.exit(f"{label}: no answer to initialize: {line[:200]!r}")
        p.stdin.close()
        p.wait()
        times[label].append(took)
for label, _, _ in variants:
    t = sorted(times[label])
    print(f"{label}: first answer min {t[0]*1e3:.0f} ms, median {t[len(t)//2]*1e3:.0f} ms, "
          f"max {t[-1]*1e3:.0f} ms")
if "reference" in times:
    median = lambda label: sorted(times[label])[len(times[label]) // 2]
    print(f"reference / ours, medians: {median('reference') / median(binaries[0]):.1f}x")
EOF_DRIVER

echo "== peak RSS (limit 2 x cassette + 10 MiB = $(( (2 * SIZE + 10 * 1048576) / 1024 )) KiB)"
head -n 2 "$CALLS" | sed -n 2p | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["frame"]))' > "$WORK/first.jsonl"
/usr/bin/time -f "first request only: %e s, %M KiB" "$BIN" replay "$CALLS" \
  < "$WORK/first.jsonl" > /dev/null 2> "$WORK/err" || true
tail -n 1 "$WORK/err"
if [ -n "${REFERENCE:-}" ]; then
  # shellcheck disable=SC2086
  /usr/bin/time -f "reference, first request only: %e s, %M KiB" $REFERENCE replay "$CALLS" \
    < "$WORK/first.jsonl" > /dev/null 2> "$WORK/err" || true
  tail -n 1 "$WORK/err"
fi
python3 - "$CALLS" > "$WORK/all.jsonl" <<'EOF_REQUESTS'
import json, sys
with open(sys.argv[1]) as f:
    next(f)
    for line in f:
        e = json.loads(line)
        if e.get("type") == "frame" and e.get("dir") == "c2s" and "method" in e["frame"]:
            print(json.dumps(e["frame"], separators=(",", ":")))
EOF_REQUESTS
/usr/bin/time -f "every recorded request: %e s, %M KiB" "$BIN" replay "$CALLS" \
  < "$WORK/all.jsonl" > /dev/null 2> "$WORK/err" || true
tail -n 1 "$WORK/err"
if [ "${HUGEPAGES:-}" = 1 ]; then
  for input in first all; do
    GLIBC_TUNABLES=glibc.malloc.hugetlb=1 /usr/bin/time \
      -f "$input, glibc.malloc.hugetlb=1: %e s, %M KiB" "$BIN" replay "$CALLS" \
      < "$WORK/$input.jsonl" > /dev/null 2> "$WORK/err" || true
    tail -n 1 "$WORK/err"
  done
fi
