#!/usr/bin/env bash
# startup.sh DIST: the fixture's start-up time (startRetsu() to the first
# answered SQS request), median of 20 starts, with min and max, measured in a
# fresh npm project with the artifacts from DIST.
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
unset RETSU_BIN
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
make_project "$1" >/dev/null
trap 'rm -rf "$PROJECT"' EXIT
cd "$PROJECT"
node startup.mjs 20
