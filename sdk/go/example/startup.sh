#!/usr/bin/env bash
# sdk/go/example/startup.sh DIST: the fixture's start-up time, from the call to
# retsutest.Start to the first answered SQS request, median (and min, max) of
# 20 starts, with the binary of DIST's release tarball.
set -euo pipefail
exec "$(dirname "$0")/run.sh" "$@" startup
