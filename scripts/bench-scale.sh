#!/usr/bin/env bash
# The speed-at-scale figures of docs/benchmarks.md in one run, each next to the reference tool's
# where it can do the work, as a ratio (reference time / ours, reference memory / ours):
#
#   - `lint` on a large realistic cassette: both cores, one core (`taskset -c 1`), peak RSS;
#   - `replay` on a 200,000-call cassette: the time to the first answer and the peak RSS, by
#     scripts/bench-replay-large.sh (the reference in the same rounds);
#   - `redact --scan` and `redact -o` on the realistic cassette: time and peak RSS, by
#     scripts/bench-redact.sh (the reference after it).
#
# Usage:
#   REALISTIC=<cassette> [REFERENCE="node <reference>/dist/cli.js"] [BASELINE=<binary>] \
#     scripts/bench-scale.sh [runs] [reference runs]      (defaults 7 and 2)
#
# REALISTIC is a large cassette of recorded tool calls with varied text (the rows of
# docs/benchmarks.md use a 210 MB one); without it scripts/gen-lint-cassette.py writes 200 MB.
# REFERENCE is the reference tool's command; it reads the same cassettes. BASELINE is another
# build of ours, timed beside this one in the replay rounds. Needs hyperfine and GNU time. Run it
# on an otherwise idle machine: the figures are wall times.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-7}"
REF_RUNS="${2:-2}"

command -v hyperfine >/dev/null || { echo "bench-scale: hyperfine is not installed (apt-get install -y hyperfine)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-scale: /usr/bin/time (GNU time) is not installed" >&2; exit 2; }

cargo build --release --quiet --bin mcp-cassette
BIN="$PWD/target/release/mcp-cassette"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

if [ -n "${REALISTIC:-}" ]; then
  REAL="$REALISTIC"
else
  REAL="$OUT/realistic.jsonl"
  python3 scripts/gen-lint-cassette.py "$REAL" 200
fi
BYTES=$(stat -c %s "$REAL")
echo "== realistic cassette: $REAL, $BYTES bytes; load $(cut -d' ' -f1-3 /proc/loadavg)"

# timed NAME RUNS COMMAND...: hyperfine's mean and min, in seconds, into $OUT/NAME.
timed() {
  local name="$1" runs="$2"
  shift 2
  # `lint` and `redact --scan` exit 1 when they find something: the realistic cassette has
  # planted secrets and poisoned texts, so that is their normal answer here.
  hyperfine -N --ignore-failure --warmup 1 --runs "$runs" --export-json "$OUT/$name.json" \
    --style none -n "$name" "$*" >/dev/null 2>"$OUT/$name.err" || { cat "$OUT/$name.err" >&2; exit 1; }
  python3 - "$OUT/$name.json" "$BYTES" > "$OUT/$name" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f"{r['mean']:.4f} {r['min']:.4f} {int(sys.argv[2]) / r['mean'] / 1e6:.0f}")
EOF
  read -r mean min rate < "$OUT/$name"
  echo "$name: mean $mean s, min $min s ($runs runs), $rate MB/s at the mean"
}

# rss NAME COMMAND...: peak RSS in KiB of one run, into $OUT/NAME.rss.
rss() {
  local name="$1"
  shift
  /usr/bin/time -f '%M' -o "$OUT/$name.rss" "$@" >/dev/null 2>&1 || true
  echo "$name: peak RSS $(( $(tail -n 1 "$OUT/$name.rss") / 1024 )) MiB"
}

# ratio A B: how many times B's figure is A's (reference over ours).
ratio() {
  # The figure is the first word of the file's last line (GNU time may write a line before it).
  python3 -c "import sys; f=lambda p: float(open(p).read().strip().splitlines()[-1].split()[0]); print(f'{f(sys.argv[2]) / f(sys.argv[1]):.1f}x')" "$1" "$2"
}

echo "== lint"
timed lint "$RUNS" "$BIN" lint "$REAL"
timed lint-one-core "$RUNS" taskset -c 1 "$BIN" lint "$REAL"
rss lint "$BIN" lint "$REAL"
if [ -n "${REFERENCE:-}" ]; then
  # shellcheck disable=SC2086
  timed ref-lint "$REF_RUNS" $REFERENCE lint "$REAL"
  # shellcheck disable=SC2086
  rss ref-lint $REFERENCE lint "$REAL"
  echo "reference / ours: time $(ratio "$OUT/lint" "$OUT/ref-lint"), peak RSS $(ratio "$OUT/lint.rss" "$OUT/ref-lint.rss")"
fi

echo "== redact (scripts/bench-redact.sh)"
INPUT="$REAL" RUNS="$RUNS" REF_RUNS="$REF_RUNS" scripts/bench-redact.sh

echo "== replay (scripts/bench-replay-large.sh)"
scripts/bench-replay-large.sh 200000 "$((RUNS * 3))"
