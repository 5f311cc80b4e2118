#!/usr/bin/env bash
# The functions a replay cold start runs, for the linker to place side by side (build.rs passes
# startup.order to LLD as a symbol ordering file). Spread over the whole binary, they made the
# kernel fault in ~30 windows of code at every start; side by side they take ~6
# (docs/benchmarks.md, replay cold start).
#
#   scripts/startup-order.sh           regenerate startup.order (needs valgrind; installed if absent)
#   scripts/startup-order.sh --check   exit 1 when under 80 % of the listed symbols are in the
#                                      release binary (symbol names carry hashes that change with
#                                      the compiler and dependency versions: then regenerate)
#
# The workload is what a test suite pays per test: spawn `replay`, `initialize`,
# `notifications/initialized`, `tools/list`, end of input. Names are recorded unmangled-as-linked
# (callgrind --demangle=no), in the order callgrind lists them.
set -euo pipefail
cd "$(dirname "$0")/.."
ORDER=startup.order
BIN=target/release/mcp-cassette

cargo build --release --locked --quiet --bin mcp-cassette

if [ "${1:-}" = "--check" ]; then
  listed=$(grep -c . "$ORDER")
  present=$(nm --defined-only "$BIN" | awk '{print $NF}' | sort -u | grep -Fxc -f "$ORDER" || true)
  echo "startup.order: $present of $listed symbols are in $BIN"
  if [ $((present * 100)) -lt $((listed * 80)) ]; then
    echo "startup.order is stale: run scripts/startup-order.sh to regenerate it" >&2
    exit 1
  fi
  exit 0
fi

command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/requests.jsonl" <<'EOF'
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"startup-order","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"tools/list"}
EOF
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/callgrind.out" \
  "$BIN" replay examples/demo/everything.cassette.jsonl < "$WORK/requests.jsonl" > /dev/null 2> "$WORK/valgrind.err" ||
  { cat "$WORK/valgrind.err" >&2; exit 1; }

# callgrind names each object (ob=, cob=) and function (fn=, cfn=) once with its text and then
# by number; a function belongs to the last object named for it.
python3 - "$WORK/callgrind.out" "$BIN" > "$ORDER" <<'EOF'
import re, sys
path, binary = sys.argv[1], sys.argv[2]
objects, functions, seen = {}, {}, []
current = {"ob": None, "cob": None}
for line in open(path):
    m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
    if m:
        kind, number, name = m.groups()
        if name:
            objects[number] = name
        current[kind] = objects.get(number)
        continue
    m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
    if m:
        kind, number, name = m.groups()
        if name:
            functions[number] = name
        owner = current["ob"] if kind == "fn" else (current["cob"] or current["ob"])
        if kind == "cfn":
            current["cob"] = None
        name = functions.get(number)
        # Code without a symbol is listed by address: nothing the linker could order.
        unnamed = name is None or re.fullmatch(r"0x[0-9a-f]+", name)
        if not unnamed and owner and owner.endswith(binary.split("/")[-1]) and name not in seen:
            seen.append(name)
print("\n".join(seen))
EOF
echo "startup.order: $(grep -c . "$ORDER") functions"
