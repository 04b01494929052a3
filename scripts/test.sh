#!/usr/bin/env bash
# Runs every test Retsu has, on a clean machine as on a developer's:
#   1. formatting and lints,
#   2. Rust unit and integration tests (the real aws-sdk-sqs client against
#      an in-process server), the reference-model test among them, then
#      the persistence tests again on `--store postgres://` against a
#      throwaway PostgreSQL (scripts/postgres.sh installs it when missing),
#   3. the static release binary (scripts/build-static.sh), the one the
#      image and the packages ship, and the benchmark crate, both built in
#      the background while step 2's first run (`cargo test`) leaves a core
#      idle, and finished before its PostgreSQL and cluster suites, which
#      time leases in real time; every later step runs against that binary,
#      so the run builds the server in release once,
#   4. the web console end to end in headless chromium (scripts/console-test.sh),
#      its cluster screen against two nodes on a throwaway PostgreSQL,
#      the cross-SDK compatibility matrix in compat/ (aws-cli, boto3 on both
#      wire protocols, aiobotocore, Celery, JavaScript v3 and v2,
#      sqs-consumer, sqs-producer, Java SDK v2 and v1 on both protocols,
#      Spring Cloud AWS, JMS, Go SDK v2 and v1 on both protocols), which
#      installs its own pinned dependencies (in the background from the
#      start of the run) and rewrites COMPATIBILITY.md;
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

# Each step's start, in minutes since the run began, and a summary at the
# end: the run has a time budget, and this shows where it goes.
started=$SECONDS
steps=()
step() {
  local at=$(( SECONDS - started ))
  steps+=("$(printf '%3d:%02d  %s' $((at / 60)) $((at % 60)) "$1")")
  echo "== [$(printf '%d:%02d' $((at / 60)) $((at % 60)))] $1"
}
trap 'step "end"; printf "%s\n" "== where the time went (start of each step):" "${steps[@]}"; bg_stop_all' EXIT

# A CI run starts from nothing and compiles once: incremental compilation's
# bookkeeping would only cost time there.
if [ -n "${CI:-}" ]; then
  export CARGO_INCREMENTAL=0
fi

# Work that waits on the network, or that the test runs leave cores idle for,
# runs in the background: each job in a session of its own (so an early exit
# stops all of its processes), its output held in a file and printed, whole,
# by the step that needs its result.
declare -A bg_pid=() bg_log=()
bg_start() { # bg_start NAME CMD...
  local name=$1
  shift
  bg_log[$name]=$(mktemp)
  setsid -w "$@" >"${bg_log[$name]}" 2>&1 &
  bg_pid[$name]=$!
}
bg_wait() { # bg_wait NAME: waits for it, prints its output, returns its status
  local name=$1 rc=0
  wait "${bg_pid[$name]}" || rc=$?
  cat "${bg_log[$name]}"
  rm -f "${bg_log[$name]}"
  unset "bg_pid[$name]" "bg_log[$name]"
  return "$rc"
}
bg_stop_all() {
  local name
  for name in "${!bg_pid[@]}"; do
    kill -- "-${bg_pid[$name]}" 2>/dev/null || true
    rm -f "${bg_log[$name]}"
  done
}

# The compatibility matrix's clients (PyPI, npm, Maven Central, the Go module
# proxy) are downloaded and built while the Rust steps compile, so their
# network waits overlap the compiler's work. The matrix's step waits for it;
# compat/run.sh then finds every client installed (its installers skip what
# is up to date) or installs what this could not, and fails as it would have.
bg_start compat-install bash compat/run.sh --install
# Likewise the Lambda tests' runtime interface emulator and runtime clients
# (the Go module proxy, PyPI, npm; the Node client compiles a C++ addon),
# which the first test using each would otherwise fetch; awaited before the
# tests run, so none of them finds a half-made install.
bg_start lambda-setup bash -c 'for step in setup setup-node setup-cli; do bash scripts/lambda-rie.sh "$step" || [ $? -eq 3 ]; done'

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test"
cargo test --workspace --no-run
echo "== the Lambda runtime emulator and clients, set up in the background at the beginning:"
bg_wait lambda-setup || echo "NOTE: the background setup failed (above); the Lambda tests set up again and say why"
# The release builds start once the tests are built: these test runs keep
# about one core busy, and the static binary and the benchmark crate use the
# other. They finish before the PostgreSQL and cluster suites start: those
# time leases and failovers in real time, on a machine left to them.
bg_start release bash -c 'bash scripts/build-static.sh && cargo build --release -p retsu-bench --bins'
cargo test --workspace

step "the static release binary (built in the background since the test build)"
bg_wait release
export RETSU_BIN="$PWD/target/x86_64-unknown-linux-gnu/release/retsu"

step "the persistence suite, PostgreSQL's own tests and the cluster's on a throwaway PostgreSQL"
# --nocapture: the kill -9 ledgers and the fault test's counts and
# failover times are printed even when they pass.
bash scripts/postgres.sh run cargo test --workspace --test persistence --test postgres --test cluster --test cluster_listings --test cluster_faults -- --nocapture

# Every integration test file that starts a TestServer, each server a
# three-node cluster in the test's process behind a round-robin proxy
# (tests/common/cluster.rs); the few tests a cluster cannot run say why.
step "the SQS and SNS integration tests against a three-node cluster"
suite=()
for f in $(grep -l 'TestServer::start' tests/*.rs); do
  suite+=(--test "$(basename "$f" .rs)")
done
RETSU_TEST_CLUSTER=1 bash scripts/postgres.sh run cargo test --workspace "${suite[@]}"

step "web console end to end"
# On a throwaway PostgreSQL: the cluster screen runs against two nodes.
# Against the static binary (RETSU_BIN), the one that ships.
bash scripts/postgres.sh run bash scripts/console-test.sh

step "compatibility matrix"
echo "== the clients' install, started in the background at the beginning:"
bg_wait compat-install || echo "NOTE: the background install failed (above); compat/run.sh installs again"
# The Terraform read-back loops at a fifth of the provider's waits: the
# same refreshes in the same order, in a fifth of the time.
TF_READBACK_TIME_SCALE=0.2 bash compat/run.sh
for tool in java mvn go; do
  command -v "$tool" >/dev/null 2>&1 || echo "NOTE: '$tool' not found: its compatibility columns were skipped (see COMPATIBILITY.md)"
done

step "--auth with aws-cli and boto3"
bash compat/auth-check.sh

if [ -x scripts/bench.sh ]; then
  step "benchmark smoke"
  bash scripts/bench.sh --quick
fi

step "soak (30 s) and small abuse checks"
bash scripts/soak.sh --seconds 30

step "fuzz targets (10 s each)"
FUZZ_SECONDS=10 bash scripts/fuzz.sh

step "container image and compose file"
bash scripts/docker-check.sh

step "packages (scripts/package.sh) and each language's sample project against dist/"
bash scripts/package.sh
bash scripts/sdk-test.sh dist
