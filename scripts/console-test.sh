#!/usr/bin/env bash
# End-to-end test of the web console (console/test/e2e.mjs): the retsu
# binary, headless Debian chromium driven by playwright-core, axe-core.
# Installs what it needs: chromium through apt when missing (no browser
# download), the pinned npm packages with `npm ci`.
#   scripts/console-test.sh [--update-docs]   (refresh docs/console-*.png)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  echo "== installing chromium (apt)"
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

echo "== web console (headless chromium)"
(cd console && npm ci --no-audit --no-fund --loglevel=error)
# RETSU_BIN: test that binary (scripts/test.sh passes the static one) rather
# than building one.
if [ -z "${RETSU_BIN:-}" ]; then
  cargo build --quiet --bin retsu
fi
RETSU_BIN="${RETSU_BIN:-$PWD/target/debug/retsu}" node console/test/e2e.mjs "$@"
