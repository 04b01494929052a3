#!/usr/bin/env bash
# run.sh DIST: installs retsu-sqs-VERSION.tgz and retsu-sqs-linux-x64-VERSION.tgz
# from DIST into a fresh npm project and runs the sample suite under node:test and
# Vitest (and Jest), the orphan tests, a CommonJS check, a TypeScript check of
# the declarations, and the missing-platform-package error.
set -euo pipefail

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "skipped: no Node.js"
  exit 0
fi
if [ $# -ne 1 ]; then
  echo "usage: $0 DIST" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=project.sh
. "$here/project.sh"

# The binary must come from the platform package, not from the environment.
unset RETSU_BIN RETSU_ENDPOINT
# @aws-sdk 3.11xx warns on every run that Node 20 support ends in 2027.
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
make_project "$1"
keep=${KEEP_PROJECT:-}
cleanup() {
  if [ -d "$PROJECT/node_modules/.retsu-sqs-linux-x64.away" ]; then
    mv "$PROJECT/node_modules/.retsu-sqs-linux-x64.away" "$PROJECT/node_modules/retsu-sqs-linux-x64"
  fi
  if [ -z "$keep" ]; then rm -rf "$PROJECT"; fi
}
trap cleanup EXIT
cd "$PROJECT"

passed=0 failed=0 failures=()
step() {
  local name=$1
  shift
  echo
  echo "=== $name"
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$name")
  fi
}

missing_platform() {
  mv node_modules/retsu-sqs-linux-x64 node_modules/.retsu-sqs-linux-x64.away
  local rc=0
  env -u RETSU_BIN PATH="$(dirname "$(command -v node)")" node missing-platform.cjs || rc=$?
  mv node_modules/.retsu-sqs-linux-x64.away node_modules/retsu-sqs-linux-x64
  return $rc
}

step "node:test (sample suite and orphan tests)" node --test --test-reporter=spec test/sqs.node.test.mjs test/tls.node.test.mjs test/orphan.node.test.mjs
step "Vitest (sample suite, shared and per-file servers)" npx --no-install vitest run
step "Jest (global setup, per-test reset)" npx --no-install jest --config jest.config.cjs
step "CommonJS require('retsu-sqs') and Jest's global setup" node cjs-check.cjs
step "TypeScript declarations (tsc --noEmit, nodenext)" npx --no-install tsc -p tsconfig.json
step "missing platform package" missing_platform

echo
if [ "$failed" -ne 0 ]; then
  printf 'failed: %s\n' "${failures[@]}"
fi
echo "js: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
