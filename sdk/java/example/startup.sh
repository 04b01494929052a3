#!/usr/bin/env bash
# Fixture start-up time: Retsu.start() to the first answered SQS request (the AWS SDK's
# ListQueues), median, min and max of 20 starts, through the artifact installed from DIST.
# usage: sdk/java/example/startup.sh DIST [STARTS]
set -euo pipefail

if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  echo "skipped: no Java"
  exit 0
fi
[ $# -ge 1 ] || { echo "usage: $0 DIST [STARTS]" >&2; exit 2; }
STARTS=${2:-20}

. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup.sh"
trap save_cache EXIT

cd "$PROJECT"
"${MVN[@]}" -q test -Dtest=StartupBench -Dsurefire.failIfNoSpecifiedTests=false -Dretsu.bench="$STARTS"
