#!/usr/bin/env bash
# run.sh DIST [PYTEST ARGS]: installs the retsu-sqs wheel from DIST into a
# fresh venv (no Rust on PATH) with the pinned test dependencies, and runs
# the sample suite with pytest: boto3, aiobotocore, bad input, and the orphan
# test (a pytest subprocess SIGKILLed mid-test leaves no retsu behind).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 DIST [pytest args...]" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/venv.sh"
make_venv "$1"
shift

# Run from a copy of the sample project, so nothing imports the source tree.
cp -R "$here/tests" "$here/orphan" "$here/pytest.ini" "$work/"
cd "$work"
"$venv/bin/python" -m pytest -ra "$@"
