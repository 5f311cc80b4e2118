#!/usr/bin/env bash
# Throughput and peak memory of `redact --scan` and `redact -o` on a synthetic cassette.
#
#   scripts/bench-redact.sh            # 100 MB cassette, 5 runs each
#   SIZE_MB=500 RUNS=3 scripts/bench-redact.sh
#
# Needs a release build (made here), hyperfine (`apt-get install -y hyperfine`) and GNU time
# (/usr/bin/time). The cassette comes from examples/gen_cassette.rs and is deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE_MB=${SIZE_MB:-100}
RUNS=${RUNS:-5}
WORK=${WORK:-${TMPDIR:-/tmp}/mcp-cassette-bench}
mkdir -p "$WORK"

command -v hyperfine >/dev/null || { echo "bench-redact: hyperfine is not installed (apt-get install -y hyperfine)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-redact: /usr/bin/time (GNU time) is not installed" >&2; exit 2; }

# The binary alone, as users build it (see bench-replay.sh).
cargo build --release --quiet --bin mcp-cassette
cargo build --release --quiet --example gen_cassette
BIN=target/release/mcp-cassette
IN="$WORK/bench-${SIZE_MB}mb.jsonl"
OUT="$WORK/bench-${SIZE_MB}mb.redacted.jsonl"
[ -s "$IN" ] || target/release/examples/gen_cassette "$IN" "$SIZE_MB"
BYTES=$(stat -c %s "$IN")

echo "machine: $(nproc) cpu(s); load: $(cut -d' ' -f1-3 /proc/loadavg)"
lscpu | head -n 15
echo "input: $IN ($BYTES bytes)"
echo

hyperfine --warmup 1 --runs "$RUNS" --ignore-failure --export-csv "$WORK/bench.csv" \
  -n scan "$BIN redact $IN --scan" \
  -n write "$BIN redact $IN -o $OUT"

echo
awk -F, -v bytes="$BYTES" 'NR > 1 { printf "%-6s mean %.3f s  min %.3f s  -> %.0f MB/s (mean), %.0f MB/s (best)\n", $1, $2, $7, bytes / $2 / 1e6, bytes / $7 / 1e6 }' "$WORK/bench.csv"

for mode in scan write; do
  if [ "$mode" = scan ]; then args=(--scan); else args=(-o "$OUT"); fi
  # --scan exits 1 when it finds secrets (the synthetic cassette has some): not a failure here.
  /usr/bin/time -f '%M' -o "$WORK/rss" "$BIN" redact "$IN" "${args[@]}" >/dev/null 2>&1 || true
  rss=$(tail -n 1 "$WORK/rss")
  echo "$mode peak RSS: $((rss / 1024)) MiB ($rss KiB)"
done
