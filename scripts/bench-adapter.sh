#!/usr/bin/env bash
# How long `useCassette` on an HTTP cassette takes to be ready (the native binary spawned, its
# port bound, its URL read), per describe block, against the target in docs/adapters.md (50 ms).
# Drives the adapter's shared implementation (npm/mcp-cassette/lib/adapter.js) with stand-in
# hooks, so no test framework is on the clock: N describe blocks one after another, each timed
# from useCassette to its beforeAll resolving, then one hit and one drain (a test's worth of
# adapter work) and afterAll. Prints the machine, then min / median / p90 / max of each.
# Usage: scripts/bench-adapter.sh [blocks]   (default 200). MCP_CASSETTE_BINARY overrides the
# release build it makes and uses.
set -euo pipefail
cd "$(dirname "$0")/.."
BLOCKS="${1:-200}"

if [ -z "${MCP_CASSETTE_BINARY:-}" ]; then
  cargo build --release --quiet --bin mcp-cassette
  export MCP_CASSETTE_BINARY="$PWD/target/release/mcp-cassette"
fi

echo "machine: $(uname -srm); $(nproc) CPU(s): $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
echo "node $(node --version); binary $MCP_CASSETTE_BINARY ($("$MCP_CASSETTE_BINARY" --version))"

BLOCKS="$BLOCKS" node --input-type=module - <<'JS'
import { performance } from "node:perf_hooks";
import { useCassetteWith } from "./npm/mcp-cassette/lib/adapter.js";

const blocks = Number(process.env.BLOCKS);
const cassette = "tests/fixtures/reference/reference-0.4/tape.http.jsonl";
const call = JSON.stringify({
  jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { m: "recorded" } },
});

// Stand-in hooks: what a framework would do with them, in its order, with nothing else around.
async function describeBlock() {
  const hooks = { all: [], each: [], after: [], done: [] };
  const registry = {
    beforeAll: (fn) => hooks.all.push(fn),
    beforeEach: (fn) => hooks.each.push(fn),
    afterEach: (fn) => hooks.after.push(fn),
    afterAll: (fn) => hooks.done.push(fn),
    inTest: () => false,
  };
  const started = performance.now();
  const tape = useCassetteWith(registry, cassette);
  for (const fn of hooks.all) await fn();
  for (const fn of hooks.each) await fn();
  const ready = performance.now() - started;
  const res = await fetch(tape.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: call,
  });
  await res.json();
  const drainStart = performance.now();
  for (const fn of hooks.after) await fn();
  const drain = performance.now() - drainStart;
  for (const fn of hooks.done) await fn();
  return { ready, drain };
}

await describeBlock(); // warm-up: node's own first fetch and spawn costs are not the adapter's
const ready = [];
const drain = [];
for (let i = 0; i < blocks; i++) {
  const t = await describeBlock();
  ready.push(t.ready);
  drain.push(t.drain);
}
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return `min ${s[0].toFixed(2)} ms, median ${at(0.5).toFixed(2)} ms, p90 ${at(0.9).toFixed(2)} ms, max ${s[s.length - 1].toFixed(2)} ms`;
};
console.log(`useCassette ready (spawn + bind + URL), ${blocks} describe blocks: ${stats(ready)}`);
console.log(`afterEach drain, per test:                          ${stats(drain)}`);
const median = [...ready].sort((a, b) => a - b)[Math.floor(ready.length / 2)];
console.log(median <= 50 ? "target met: median ready <= 50 ms" : "TARGET MISSED: median ready > 50 ms");
JS
