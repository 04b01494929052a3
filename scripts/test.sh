#!/usr/bin/env bash
# Runs every test Retsu has, on a clean machine as on a developer's:
#   1. formatting and lints,
#   2. Rust unit and integration tests (the real aws-sdk-sqs client against
#      an in-process server), the reference-model test among them,
#   2b. each cargo-fuzz target for 20 seconds (scripts/fuzz.sh),
#   3. the cross-SDK compatibility matrix in compat/ (aws-cli, boto3 on both
#      wire protocols, JavaScript v3 and v2, sqs-consumer), which installs its
#      own pinned dependencies and rewrites COMPATIBILITY.md,
#   4. a short benchmark smoke run, so the benchmark tool keeps working,
#   5. the container image and compose file (scripts/docker-check.sh: builds
#      the static binary and the FROM-scratch image with podman, runs it,
#      validates docker-compose.yml; says loudly what it could not do).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

echo "== cargo test"
cargo test --workspace

echo "== fuzz targets, 20 s each (scripts/fuzz.sh)"
bash scripts/fuzz.sh

echo "== compatibility matrix"
bash compat/run.sh

if [ -x scripts/bench.sh ]; then
  echo "== benchmark smoke"
  bash scripts/bench.sh --quick
fi

echo "== container image and compose file"
bash scripts/docker-check.sh
