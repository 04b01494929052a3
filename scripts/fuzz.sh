#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ briefly (CI), or one target long.
#   scripts/fuzz.sh                   each target for $FUZZ_SECONDS (20) s
#   scripts/fuzz.sh request_path 600  one target for 600 s
# Needs the nightly toolchain (libFuzzer's sanitizer flags); installs the
# pinned cargo-fuzz from crates.io if it is missing. New inputs the fuzzer
# finds go to a scratch directory, so the committed corpus (fuzz/corpus/)
# stays small; a crash leaves its input in fuzz/artifacts/<target>/ and
# fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.2
TARGETS=(json_decoder query_decoder receipt_handle md5_attributes request_path)

if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz.sh: no nightly toolchain; cargo-fuzz needs one. Skipping the fuzz run." >&2
  exit 0
fi
if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

run() {
  local target=$1 seconds=$2 scratch
  scratch=$(mktemp -d)
  echo "== fuzz $target for ${seconds}s"
  # Reads fuzz/corpus/$target as seeds, writes new finds to $scratch only.
  cargo +nightly fuzz run "$target" "$scratch" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
  rm -rf "$scratch"
}

if [ $# -ge 1 ]; then
  run "$1" "${2:-${FUZZ_SECONDS:-20}}"
else
  for t in "${TARGETS[@]}"; do
    run "$t" "${FUZZ_SECONDS:-20}"
  done
fi
