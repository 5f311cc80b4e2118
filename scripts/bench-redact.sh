#!/usr/bin/env bash
# Throughput and peak memory of `redact --scan` and `redact -o` on a synthetic cassette, or on
# the one INPUT names.
#
#   scripts/bench-redact.sh            # 100 MB cassette, 5 runs each
#   SIZE_MB=500 RUNS=3 scripts/bench-redact.sh
#   INPUT=<cassette> REFERENCE="node <reference>/dist/cli.js" REF_RUNS=2 scripts/bench-redact.sh
#
# With REFERENCE, the reference tool's command, both are timed on it too (REF_RUNS runs each,
# default 2) and the ratios printed (reference time / ours, reference memory / ours).
# Needs a release build (made here), hyperfine (`apt-get install -y hyperfine`) and GNU time
# (/usr/bin/time). The synthetic cassette comes from examples/gen_cassette.rs and is
# deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE_MB=${SIZE_MB:-100}
RUNS=${RUNS:-5}
REF_RUNS=${REF_RUNS:-2}
WORK=${WORK:-${TMPDIR:-/tmp}/mcp-cassette-bench}
mkdir -p "$WORK"

command -v hyperfine >/dev/null || { echo "bench-redact: hyperfine is not installed (apt-get install -y hyperfine)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-redact: /usr/bin/time (GNU time) is not installed" >&2; exit 2; }

# The binary alone, as users build it (see bench-replay.sh).
cargo build --release --quiet --bin mcp-cassette
BIN=target/release/mcp-cassette
if [ -n "${INPUT:-}" ]; then
  IN="$INPUT"
else
  cargo build --release --quiet --example gen_cassette
  IN="$WORK/bench-${SIZE_MB}mb.jsonl"
  [ -s "$IN" ] || target/release/examples/gen_cassette "$IN" "$SIZE_MB"
fi
OUT="$WORK/bench.redacted.jsonl"
BYTES=$(stat -c %s "$IN")

echo "machine: $(nproc) cpu(s); load: $(cut -d' ' -f1-3 /proc/loadavg)"
lscpu | head -n 15
echo "input: $IN ($BYTES bytes)"
echo

# measure LABEL RUNS COMMAND: hyperfine of `--scan` and `-o` into $WORK/LABEL.csv, then the
# peak RSS of each into $WORK/LABEL-scan.rss and $WORK/LABEL-write.rss (KiB).
measure() {
  local label="$1" runs="$2" cmd="$3"
  hyperfine --warmup 1 --runs "$runs" --ignore-failure --export-csv "$WORK/$label.csv" \
    -n "$label scan" "$cmd redact $IN --scan" \
    -n "$label write" "$cmd redact $IN -o $OUT"
  echo
  awk -F, -v bytes="$BYTES" 'NR > 1 { printf "%-16s mean %.3f s  min %.3f s  -> %.0f MB/s (mean), %.0f MB/s (best)\n", $1, $2, $7, bytes / $2 / 1e6, bytes / $7 / 1e6 }' "$WORK/$label.csv"
  for mode in scan write; do
    if [ "$mode" = scan ]; then args=(--scan); else args=(-o "$OUT"); fi
    # --scan exits 1 when it finds secrets (the synthetic cassette has some): not a failure here.
    # shellcheck disable=SC2086
    /usr/bin/time -f '%M' -o "$WORK/$label-$mode.rss" $cmd redact "$IN" "${args[@]}" >/dev/null 2>&1 || true
    rss=$(tail -n 1 "$WORK/$label-$mode.rss")
    echo "$label $mode peak RSS: $((rss / 1024)) MiB ($rss KiB)"
  done
}

measure ours "$RUNS" "$BIN"
if [ -n "${REFERENCE:-}" ]; then
  echo
  measure reference "$REF_RUNS" "$REFERENCE"
  echo
  echo "reference / ours:"
  for mode in scan write; do
    ours=$(awk -F, -v n="ours $mode" '$1 == n { print $2 }' "$WORK/ours.csv")
    ref=$(awk -F, -v n="reference $mode" '$1 == n { print $2 }' "$WORK/reference.csv")
    echo "$mode: time $(awk -v a="$ours" -v b="$ref" 'BEGIN { printf "%.1fx", b / a }'), peak RSS $(awk -v a="$(tail -n 1 "$WORK/ours-$mode.rss")" -v b="$(tail -n 1 "$WORK/reference-$mode.rss")" 'BEGIN { printf "%.1fx", b / a }')"
  done
fi
