#!/usr/bin/env bash
# Every test: style gates, then the unit and integration suites including interop against real
# MCP servers and SDK clients (installed first, pinned).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-interop.sh
cargo fmt --all -- --check
cargo clippy --locked --all-targets -- -D warnings
cargo test --locked
# The start-up layout hint still names the release binary's functions (see build.rs).
scripts/startup-order.sh --check
