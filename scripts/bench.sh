#!/usr/bin/env bash
# Builds the release server and the benchmark, then runs the benchmark.
# Arguments go to retsu-bench (default: --all). Examples:
#   scripts/bench.sh                 # every scenario, 3 rounds, both clients
#   scripts/bench.sh --quick         # ~10 s smoke: fails only on errors
#   scripts/bench.sh --scenario send,drain --client raw
# Results: a table on stdout, JSON in target/bench/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin retsu
if [ "$#" -eq 0 ]; then
  set -- --all
fi
exec cargo run --release -p retsu-bench -- "$@"
