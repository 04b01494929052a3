#!/usr/bin/env bash
# Runs every language's sample project against the artifacts in DIST (made
# by scripts/package.sh), each installed into a fresh environment: a new
# venv (Python), a new npm project (JavaScript), a new local Maven
# repository (Java), a Go module with a replace directive and the release
# tarball's binary on PATH (Go). Each suite includes its orphan test (the
# test process SIGKILLed mid-test leaves no retsu behind).
#
#   bash scripts/sdk-test.sh [DIST]          # default dist/
#   bash scripts/sdk-test.sh dist --startup  # also: fixture start-up, median of 20
#
# A machine without a language's toolchain prints "skipped: no <tool>" for
# it, as compat/run.sh does; that is not a failure. Exit status: non-zero
# if any suite that could run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
DIST=$(cd "${1:-dist}" && pwd)
STARTUP=0
[ "${2:-}" = --startup ] && STARTUP=1

failed=()
passed=()
for language in python js java go; do
  script=sdk/$language/example/run.sh
  if [ ! -f "$script" ]; then
    echo "!! $script is missing" >&2
    failed+=("$language (no $script)")
    continue
  fi
  echo "== sdk: $language sample project against $DIST"
  if bash "$script" "$DIST"; then
    passed+=("$language")
  else
    failed+=("$language")
  fi
  if [ "$STARTUP" = 1 ] && [ -f "sdk/$language/example/startup.sh" ]; then
    echo "== sdk: $language fixture start-up"
    bash "sdk/$language/example/startup.sh" "$DIST" || failed+=("$language start-up")
  fi
done
echo "== sdk: passed: ${passed[*]:-none}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "!! sdk: FAILED: ${failed[*]}" >&2
  exit 1
fi
