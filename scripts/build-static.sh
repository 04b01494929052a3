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
# - identical code folding (--icf=all), where the linker is rust-lld (the
#   default for x86_64 Linux): generic code instantiated for types of the
#   same layout often compiles to the same bytes, and one copy is kept.
#   Rust promises no distinct addresses for functions, and MSVC targets
#   fold this way in every release build. ("safe" folds nothing here:
#   the LTO module marks every address significant.)
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:-x86_64-unknown-linux-gnu}
FLAGS="-C target-feature=+crt-static -C relocation-model=static -C strip=symbols"
if [ "$TARGET" = x86_64-unknown-linux-gnu ]; then
  FLAGS="$FLAGS -C link-arg=-Wl,--icf=all"
fi
env RUSTFLAGS="$FLAGS" \
  cargo build --release --locked --target "$TARGET" --bin retsu
