#!/usr/bin/env bash
# Runs the cargo-fuzz (libFuzzer) targets of fuzz/: briefly in CI, or one long.
#   scripts/fuzz.sh                     every target for $FUZZ_SECONDS (15) s
#   scripts/fuzz.sh request_path 3600   one target for 3600 s
#   scripts/fuzz.sh request_path 0 -runs=10000000   extra libFuzzer flags
#                                       (0 s: no time limit)
# Toolchain: nightly when installed; otherwise stable, which builds these
# targets as they are (with `-s none` cargo-fuzz 0.13 passes no -Z flag;
# checked with `cargo +stable fuzz build -s none`), then stable with
# RUSTC_BOOTSTRAP=1 should a later cargo-fuzz want a nightly flag; skipped,
# saying so, when none builds. Installs the pinned cargo-fuzz from
# crates.io if missing.
# Sanitizer-free (`-s none`): the code is safe Rust, and without ASan the
# fuzzer runs about twice as fast; debug assertions and overflow checks
# stay on (cargo-fuzz's default).
# New inputs the fuzzer finds go to a scratch directory, so the committed
# corpus (fuzz/corpus/) stays small; refresh it with `cargo fuzz cmin`. A
# crash leaves its input in fuzz/artifacts/<target>/ and fails the script.
# Build products go to $RETSU_FUZZ_TARGET_DIR (default
# ~/.cache/retsu/fuzz-target, outside the clone, so that CI on a machine
# that built them before only rebuilds Retsu itself).
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.2
TARGETS=(json_decoder query_decoder receipt_handle md5_attributes request_path)
TARGET_DIR=${RETSU_FUZZ_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/retsu/fuzz-target}
# The brief CI runs (no arguments) build without optimizations: on a fresh
# machine that halves the build, which is most of the step; a long run of
# one target is optimized (`FUZZ_PROFILE=release|dev` overrides either).
if [ -n "${FUZZ_PROFILE:-}" ]; then
  PROFILE=$FUZZ_PROFILE
elif [ $# -ge 1 ]; then
  PROFILE=release
else
  PROFILE=dev
fi
PROFILE_FLAGS=()
[ "$PROFILE" = dev ] && PROFILE_FLAGS=(--dev)

if ! command -v cargo-fuzz >/dev/null 2>&1 \
  || ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
  echo "fuzz.sh: installing cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

build() { # build <toolchain>
  cargo "+$1" fuzz build -s none "${PROFILE_FLAGS[@]}" --target-dir "$TARGET_DIR"
}

TOOLCHAIN=""
if rustup run nightly rustc --version >/dev/null 2>&1; then
  TOOLCHAIN=nightly
  build nightly || { echo "fuzz.sh: the fuzz build failed on nightly" >&2; exit 1; }
else
  echo "fuzz.sh: no nightly toolchain; building with stable"
  if build stable; then
    TOOLCHAIN=stable
  else
    echo "fuzz.sh: stable failed; retrying with RUSTC_BOOTSTRAP=1"
    export RUSTC_BOOTSTRAP=1
    if build stable; then
      TOOLCHAIN=stable
    else
      echo "fuzz.sh: SKIPPED: no toolchain here builds the cargo-fuzz targets (see above)." >&2
      exit 0
    fi
  fi
fi

run() { # run <target> <seconds> [libFuzzer flags...]
  local target=$1 seconds=$2 scratch
  shift 2
  scratch=$(mktemp -d)
  echo "== fuzz $target (${seconds}s, $TOOLCHAIN, $PROFILE build)"
  # Reads fuzz/corpus/$target as seeds, writes new finds to $scratch only.
  # libFuzzer's line per new input and its dictionary are noise here.
  set +e
  cargo "+$TOOLCHAIN" fuzz run -s none "${PROFILE_FLAGS[@]}" --target-dir "$TARGET_DIR" "$target" \
    "$scratch" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 "$@" 2>&1 | grep -v -E '^#[0-9]+.*(NEW|REDUCE|pulse) |" # Uses: [0-9]+$'
  local status=${PIPESTATUS[0]}
  set -e
  rm -rf "$scratch"
  if [ "$status" -ne 0 ]; then
    echo "fuzz.sh: $target FAILED (exit $status); its input is in fuzz/artifacts/$target/" >&2
    return 1
  fi
}

if [ $# -ge 1 ]; then
  target=$1
  seconds=${2:-${FUZZ_SECONDS:-15}}
  shift $(($# >= 2 ? 2 : 1))
  run "$target" "$seconds" "$@"
else
  for t in "${TARGETS[@]}"; do
    run "$t" "${FUZZ_SECONDS:-15}"
  done
fi
