#!/usr/bin/env bash
# startup.sh DIST: the fixture's start-up time, from the call to
# retsu_sqs.Server() to the first answered SQS request, over 20 starts
# (median, min, max), with the wheel from DIST in a fresh venv.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 DIST" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/venv.sh"
make_venv "$1"
cd "$work"
"$venv/bin/python" "$here/startup.py"
