#!/usr/bin/env bash
# How fast a `view` page opens and scrolls, against the target in docs/view.md: a 50,000-frame
# cassette opens and scrolls in at most 2 s.
#
#   - the cassette: N frame entries (default 50,000) of synthetic HTTP traffic written by the
#     generator below: tools/call requests and results (a few hundred bytes of prose each),
#     progress notifications, task-creating calls polled with tasks/get, streamed (SSE) answers,
#     a standalone GET stream, and redaction placeholders;
#   - `mcp-cassette view` writes the page (its wall time and the page size are printed);
#   - headless Chromium opens the page with `#bench=scroll`: the page records, in its own DOM,
#     when the data was parsed and the first screen drawn (`data-t-parse`, `data-t-render`, ms
#     since navigation start, which includes reading the file), then scrolls the whole
#     timeline top to bottom in 100 steps, drawing and laying out each (`data-t-scroll`, ms);
#   - the wall time of the whole `chromium --dump-dom` run, browser start and exit included, is
#     an upper bound on all of it.
# Usage: scripts/bench-view.sh [frames] [runs]   (defaults 50000 and 3). Prints the machine first.
# The browser figures are wall-clock: on a busy machine they grow with the load.
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES="${1:-50000}"
RUNS="${2:-3}"

command -v chromium >/dev/null || { echo "chromium is needed (apt-get install chromium)" >&2; exit 2; }
# MCP_CASSETTE_BINARY names an already built binary (the page is the same from any build; only
# the `view` wall time differs).
BIN="${MCP_CASSETTE_BINARY:-}"
if [ -z "$BIN" ]; then
  cargo build --release --quiet --bin mcp-cassette
  BIN="$PWD/target/release/mcp-cassette"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "== machine"
echo "nproc: $(nproc)"
lscpu | grep -E 'Model name|^CPU\(s\)' || true
uptime
chromium --version

echo "== cassette ($FRAMES frames)"
python3 - "$FRAMES" "$WORK/big.cassette.jsonl" <<'PY'
import json, random, sys
frames, path = int(sys.argv[1]), sys.argv[2]
r = random.Random(1)
words = ("the server returned a list of items for the query and the agent should summarise "
         "weather forecast river mountain report issue pull request commit branch build test "
         "deploy cache index token budget window context model prompt resource").split()
tools = ["search_issues", "get_weather", "read_file", "query_db", "fetch_page", "list_commits"]
dump = lambda o: json.dumps(o, ensure_ascii=False, separators=(",", ":"))
out = open(path, "w", encoding="utf-8")
out.write(dump({"type": "header", "cassetteVersion": 2, "recorder": "bench-view",
                "startedAt": "2026-01-01T00:00:00.000Z", "transport": "http",
                "url": "http://127.0.0.1:3000/mcp", "redaction": {"applied": True}}) + "\n")
n = 0; t = 0; next_id = 0
def frame(d, f):
    global n, t
    t += r.randint(0, 4)
    out.write(dump({"type": "frame", "t": t, "dir": d, "frame": f}) + "\n"); n += 1
def prose(k):
    return " ".join(r.choice(words) for _ in range(k))
while n < frames:
    next_id += 1
    i = next_id
    roll = r.random()
    tool = r.choice(tools)
    args = {"query": prose(4)}
    if r.random() < 0.02:
        args["token"] = "[REDACTED:github:%08x]" % r.getrandbits(32)
    frame("c2s", {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool, "arguments": args}})
    if roll < 0.05:
        task = "task-%d" % i
        frame("s2c", {"jsonrpc": "2.0", "id": i, "result": {"resultType": "task", "taskId": task, "status": "working"}})
        for _ in range(2):
            next_id += 1
            frame("c2s", {"jsonrpc": "2.0", "id": next_id, "method": "tasks/get", "params": {"taskId": task}})
            frame("s2c", {"jsonrpc": "2.0", "id": next_id, "result": {"taskId": task, "status": "working"}})
    elif roll < 0.15:
        t += 1
        chunks = [{"t": t + k, "frame": {"jsonrpc": "2.0", "method": "notifications/progress",
                                          "params": {"progressToken": i, "progress": k}}} for k in range(3)]
        chunks.append({"t": t + 3, "frame": {"jsonrpc": "2.0", "id": i, "result": {
            "content": [{"type": "text", "text": prose(40)}]}}})
        out.write(dump({"type": "chunks", "t": t, "dir": "s2c", "id": i, "chunks": chunks}) + "\n")
        n += 1
    else:
        if roll < 0.3:
            frame("s2c", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": prose(8)}})
        frame("s2c", {"jsonrpc": "2.0", "id": i, "result": {
            "content": [{"type": "text", "text": prose(50)}], "structuredContent": {"n": i}}})
    if next_id % 5000 == 0:
        out.write(dump({"type": "chunks", "t": t, "dir": "s2c", "via": "get", "chunks": [
            {"t": t, "frame": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}}]}) + "\n")
        n += 1
out.close()
print(f"{n} entries", file=sys.stderr)
PY
ls -l "$WORK/big.cassette.jsonl" | awk '{print "cassette bytes:", $5}'

echo "== view"
start=$(date +%s.%N)
"$BIN" view "$WORK/big.cassette.jsonl" -o "$WORK/big.html"
end=$(date +%s.%N)
echo "view wall: $(awk "BEGIN{print $end - $start}") s"
ls -l "$WORK/big.html" | awk '{print "page bytes:", $5}'

echo "== chromium (headless, #bench=scroll)"
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }
SANDBOX=()
[ "$(id -u)" = 0 ] && SANDBOX=(--no-sandbox)
echo '<!DOCTYPE html><html><body>empty</body></html>' >"$WORK/empty.html"
# One browser run on `$1`: its wall time, and the CPU time of all its processes (user + sys,
# which contention does not inflate the way it inflates wall time).
browse() {
  local profile start end
  profile="$(mktemp -d)"
  start=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$WORK/cpu" chromium --headless --disable-gpu --no-first-run \
    --disable-extensions "${SANDBOX[@]}" --user-data-dir="$profile" --window-size=1280,800 \
    --dump-dom "$1" 2>/dev/null >"$WORK/dom.html"
  end=$(date +%s.%N)
  rm -rf "$profile"
  WALL=$(awk "BEGIN{print $end - $start}")
  CPU=$(awk '{print $1 + $2}' "$WORK/cpu")
}
browse "file://$WORK/empty.html"
echo "empty page (browser start and exit): wall $WALL s, cpu $CPU s"
for run in $(seq "$RUNS"); do
  browse "file://$WORK/big.html#"
  open_cpu=$CPU
  browse "file://$WORK/big.html#bench=scroll"
  marks=$(grep -o '<html[^>]*>' "$WORK/dom.html" | grep -o 'data-t-[a-z]*="[0-9.]*"' | tr '\n' ' ')
  echo "run $run: open cpu $open_cpu s; open+scroll wall $WALL s, cpu $CPU s; $marks"
done
echo "(data-t-parse / data-t-render: ms from navigation start; data-t-scroll: ms for 100 scroll"
echo " steps; cpu includes the browser's own start and exit, and --dump-dom writing the page's"
echo " whole DOM out, data block included: subtract the empty page's)"
