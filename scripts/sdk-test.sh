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

# One language's sample project (and, with --startup, its start-up figure);
# its verdicts go to $state/<language>.result, one "passed|failed what" a line.
run_language() { # run_language LANGUAGE
  local language=$1 script=sdk/$1/example/run.sh result=$state/$1.result
  : >"$result"
  if [ ! -f "$script" ]; then
    echo "!! $script is missing" >&2
    echo "failed $language (no $script)" >>"$result"
    return 0
  fi
  echo "== sdk: $language sample project against $DIST"
  if bash "$script" "$DIST"; then
    echo "passed $language" >>"$result"
  else
    echo "failed $language" >>"$result"
  fi
  if [ "$STARTUP" = 1 ] && [ -f "sdk/$language/example/startup.sh" ]; then
    echo "== sdk: $language fixture start-up"
    bash "sdk/$language/example/startup.sh" "$DIST" || echo "failed $language start-up" >>"$result"
  fi
}

# The projects are independent (each its own temporary directory, caches
# and servers) and mostly wait on installs and process start-up, so two run
# at a time (SDK_TEST_JOBS=N to change it); each one's output is printed
# whole, in this order. With --startup one at a time, so that the start-up
# figures are measured alone. Their orphan checks find their own servers by
# a marker on the command line, so a neighbour's retsu is never mistaken.
languages=(python js java go)
jobs_max=${SDK_TEST_JOBS:-2}
[ "$STARTUP" = 1 ] && jobs_max=1
state=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait; rm -rf "$state"' EXIT
# shellcheck source=ordered-jobs.sh
source scripts/ordered-jobs.sh
ordered_init "$state"
for language in "${languages[@]}"; do
  ordered_run "$jobs_max" "$language" run_language "$language"
done
ordered_finish

failed=()
passed=()
for language in "${languages[@]}"; do
  if [ ! -f "$state/$language.done" ]; then
    cat "$state/$language.out" 2>/dev/null || true
    failed+=("$language (did not finish)")
    continue
  fi
  while read -r verdict what; do
    case "$verdict" in
      passed) passed+=("$what") ;;
      failed) failed+=("$what") ;;
    esac
  done <"$state/$language.result"
done
echo "== sdk: passed: ${passed[*]:-none}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "!! sdk: FAILED: ${failed[*]}" >&2
  exit 1
fi
