-- wrk script for scripts/bench-replay-http.sh: every request is the same keep-alive POST of one
-- JSON-RPC request, its method taken from BENCH_METHOD (default "ping"). No request() or
-- response() function is defined, so wrk formats the request once and counts answers in C.
local method = os.getenv("BENCH_METHOD") or "ping"
wrk.method = "POST"
wrk.path = "/"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"' .. method .. '","params":{}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
