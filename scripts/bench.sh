#!/usr/bin/env bash
# Builds the release server and the benchmark, then runs the benchmark.
# Arguments go to retsu-bench (default: --all). Examples:
#   scripts/bench.sh                 # every scenario, 3 rounds, both clients
#   scripts/bench.sh --quick         # ~10 s smoke: fails only on errors
#   scripts/bench.sh --scenario send,drain --client raw
# Results: a table on stdout, JSON in target/bench/results.json.
# RETSU_BIN=path measures that server binary rather than building one.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -eq 0 ]; then
  set -- --all
fi
# RETSU_BIN: measure that binary (e.g. the static one) instead of building one.
if [ -n "${RETSU_BIN:-}" ]; then
  set -- --retsu-bin "$RETSU_BIN" "$@"
else
  cargo build --release --bin retsu
fi
# Both of the crate's binaries in one build (scripts/soak.sh builds the same):
# their dependencies once, and the two final crates compiled side by side.
cargo build --release -p retsu-bench --bins
exec cargo run --release -p retsu-bench -- "$@"
