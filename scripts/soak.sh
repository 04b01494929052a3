#!/usr/bin/env bash
# The soak test and the abuse checks, against the release build
# (retsu-soak, in the benchmark crate). Bounded: each part has a time limit.
#   scripts/soak.sh                    # CI: 30 s soak, then the small abuse checks
#   scripts/soak.sh --seconds 3600     # the one-hour soak (plus the small checks)
#   scripts/soak.sh --abuse full       # 10,000 long polls, 100,000 queues,
#                                      # 1,000,000 messages, 120,000 in flight
#   scripts/soak.sh --seconds 0 --abuse full   # the abuse checks alone
#   scripts/soak.sh --abuse none       # the soak alone
# Results: target/soak/soak.json and target/soak/abuse.json; the exit status
# is non-zero when a message is lost or duplicated, memory grows, or an
# abuse check fails. On a shared machine, run it under the heavy lock.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=30
abuse=small
while [ "$#" -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --abuse) abuse="$2"; shift 2 ;;
    *) echo "usage: $0 [--seconds N] [--abuse small|full|none]" >&2; exit 2 ;;
  esac
done
case "$abuse" in small|full|none) ;; *) echo "--abuse: small, full or none" >&2; exit 2 ;; esac

# 10,000 long polls hold 10,000 client sockets in this process (the server
# raises its own limit): raise the soft limit, and the hard one if allowed.
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# Two builds, as bench.sh does: built together, the two packages' features
# unify and the server would be compiled a second time.
# RETSU_BIN: soak that binary (e.g. the static one) instead of building one.
server=()
if [ -n "${RETSU_BIN:-}" ]; then
  server=(--retsu-bin "$RETSU_BIN")
else
  cargo build --release --bin retsu
fi
# Both of the crate's binaries, as scripts/bench.sh builds them: whichever
# runs first builds both, and the other finds them up to date.
cargo build --release -p retsu-bench --bins
bin=${CARGO_TARGET_DIR:-target}/release/retsu-soak

if [ "$seconds" -gt 0 ]; then
  timeout "$((seconds + 300))" "$bin" "${server[@]}" soak --seconds "$seconds"
fi
case "$abuse" in
  small) timeout 600 "$bin" "${server[@]}" abuse --small ;;
  full) timeout 3600 "$bin" "${server[@]}" abuse ;;
esac
