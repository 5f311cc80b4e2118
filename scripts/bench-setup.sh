# Sourced by the stdio benchmark scripts (bench-replay.sh, bench-replay-large.sh,
# bench-verify.sh): builds what they run and names it, makes a scratch folder removed on exit,
# and defines `machine`, which prints what the figures were taken on.
#
# The binary is built alone, as users build it: built in the same `cargo build` as the examples,
# feature unification with their dev-dependencies gives it other symbol names, and
# startup.order (see scripts/bench-replay.sh) would no longer match them.
cargo build --release --quiet --bin mcp-cassette
cargo build --release --quiet --example bench_client --example fixture_server
BIN="$PWD/target/release/mcp-cassette"
CLIENT="$PWD/target/release/examples/bench_client"
SERVER="$PWD/target/release/examples/fixture_server"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

machine() {
  echo "== machine"
  echo "nproc: $(nproc)"
  lscpu | head -20
  uptime
}
