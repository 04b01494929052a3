#!/usr/bin/env bash
# Builds the static binary every artifact carries (the packages, the
# container image): target/TARGET/release/retsu.
#
#   scripts/build-static.sh [TARGET]     (default x86_64-unknown-linux-gnu)
#
# - +crt-static: glibc linked in, so the binary runs on any Linux of the
#   architecture and in an empty (scratch) image.
# - relocation-model=static: a plain static executable rather than a
#   static PIE, which carries a relocation table for every pointer in its
#   data (a few hundred KB of the image's size budget) to be placed at a
#   random address; Retsu is a local emulator, not a network-facing daemon.
# - symbols stripped.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:-x86_64-unknown-linux-gnu}
env RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static -C strip=symbols" \
  cargo build --release --locked --target "$TARGET" --bin retsu
