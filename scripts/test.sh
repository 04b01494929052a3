#!/usr/bin/env bash
# Runs every test Retsu has, on a clean machine as on a developer's:
#   1. formatting and lints,
#   2. Rust unit and integration tests (the real aws-sdk-sqs client against
#      an in-process server), the reference-model test among them, then
#      the persistence tests again on `--store postgres://` against a
#      throwaway PostgreSQL (scripts/postgres.sh installs it when missing),
#   3. the web console end to end in headless chromium (scripts/console-test.sh),
#   4. the cross-SDK compatibility matrix in compat/ (aws-cli, boto3 on both
#      wire protocols, aiobotocore, Celery, JavaScript v3 and v2,
#      sqs-consumer, sqs-producer, Java SDK v2 and v1 on both protocols,
#      Spring Cloud AWS, JMS, Go SDK v2 and v1 on both protocols), which
#      installs its own pinned dependencies and rewrites COMPATIBILITY.md;
#      without Java or Go those columns are skipped and it says so,
#      then compat/auth-check.sh: aws-cli and boto3 against --auth,
#   5. a short benchmark smoke run, so the benchmark tool keeps working,
#      then the 30-second soak and the small abuse checks (scripts/soak.sh),
#      then each fuzz target for 10 s (scripts/fuzz.sh; skipped, saying so,
#      when no toolchain can build cargo-fuzz targets),
#   6. the container image and compose file (scripts/docker-check.sh: builds
#      the static binary and the FROM-scratch image with podman, runs it,
#      validates docker-compose.yml; says loudly what it could not do),
#   7. the packages: scripts/package.sh builds every artifact into dist/
#      (wheel, npm tarballs, jar, release tarball, the image as a tarball
#      now that podman is there), then scripts/sdk-test.sh installs each
#      into a fresh environment and runs its language's sample suite with
#      the official AWS SDK, orphan test included.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

echo "== cargo test"
cargo test --workspace

echo "== the persistence suite, PostgreSQL's own tests and the cluster's on a throwaway PostgreSQL"
# --nocapture: the kill -9 ledgers and the fault test's counts and
# failover times are printed even when they pass.
bash scripts/postgres.sh run cargo test --test persistence --test postgres --test cluster --test cluster_faults -- --nocapture

# Every integration test file that starts a TestServer, each server a
# three-node cluster in the test's process behind a round-robin proxy
# (tests/common/cluster.rs); the few tests a cluster cannot run say why.
echo "== the SQS and SNS integration tests against a three-node cluster"
suite=()
for f in $(grep -l 'TestServer::start' tests/*.rs); do
  suite+=(--test "$(basename "$f" .rs)")
done
RETSU_TEST_CLUSTER=1 bash scripts/postgres.sh run cargo test "${suite[@]}"

echo "== web console end to end"
bash scripts/console-test.sh

echo "== compatibility matrix"
bash compat/run.sh
for tool in java mvn go; do
  command -v "$tool" >/dev/null 2>&1 || echo "NOTE: '$tool' not found: its compatibility columns were skipped (see COMPATIBILITY.md)"
done

echo "== --auth with aws-cli and boto3"
RETSU_BIN="${RETSU_BIN:-target/release/retsu}" bash compat/auth-check.sh

if [ -x scripts/bench.sh ]; then
  echo "== benchmark smoke"
  bash scripts/bench.sh --quick
fi

echo "== soak (30 s) and small abuse checks"
bash scripts/soak.sh --seconds 30

echo "== fuzz targets (10 s each)"
FUZZ_SECONDS=10 bash scripts/fuzz.sh

echo "== container image and compose file"
bash scripts/docker-check.sh

echo "== packages (scripts/package.sh) and each language's sample project against dist/"
bash scripts/package.sh
bash scripts/sdk-test.sh dist
