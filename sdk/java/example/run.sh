#!/usr/bin/env bash
# Installs DIST/retsu-junit5-VERSION.jar (with its pom) into a fresh local Maven
# repository, runs this sample suite with Maven Surefire, then the orphan test.
# usage: sdk/java/example/run.sh DIST
set -euo pipefail

if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  echo "skipped: no Java"
  exit 0
fi
[ $# -eq 1 ] || { echo "usage: $0 DIST" >&2; exit 2; }

. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup.sh"
trap save_cache EXIT

cd "$PROJECT"
echo "== sample suite (Surefire)"
"${MVN[@]}" test

# Orphan test: a Surefire JVM starts a server and blocks; SIGKILL that JVM; no
# retsu of this run (identified by its --data-dir in /proc/*/cmdline) may remain.
echo "== orphan test"
ODIR=$(mktemp -d "/tmp/retsu-java-orphan.XXXXXX")
MARK="$ODIR/data"
"${MVN[@]}" -q test -Dtest=OrphanTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Dretsu.orphan.dir="$ODIR" > "$WORK/orphan.log" 2>&1 &
MVN_PID=$!

ours() { # pids of retsu processes whose command line names $MARK
  local p
  for p in /proc/[0-9]*; do
    if { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null | grep -q -- "--data-dir $MARK"; then
      echo "${p#/proc/}"
    fi
  done
}
fail() {
  echo "orphan: FAILED: $*" >&2
  cat "$WORK/orphan.log" >&2 || true
  kill -9 $(ours) "$MVN_PID" 2>/dev/null || true
  echo "orphan: 0 passed, 1 failed"
  exit 1
}

for _ in $(seq 1 600); do
  [ -f "$ODIR/pids" ] && break
  kill -0 "$MVN_PID" 2>/dev/null || fail "mvn exited before the test started a server"
  sleep 0.1
done
[ -f "$ODIR/pids" ] || fail "no server started within 60 s"
read -r JVM_PID RETSU_PID < "$ODIR/pids"
[ "$(ours)" = "$RETSU_PID" ] || fail "expected retsu pid $RETSU_PID with --data-dir $MARK, found: $(ours)"
grep -q "surefire" "/proc/$JVM_PID/cmdline" || fail "pid $JVM_PID is not a Surefire JVM"
[ "$(awk '{print $4}' "/proc/$RETSU_PID/stat")" = "$JVM_PID" ] || fail "retsu $RETSU_PID is not a child of JVM $JVM_PID"

echo "orphan: SIGKILL Surefire JVM $JVM_PID (its retsu is $RETSU_PID)"
kill -9 "$JVM_PID"
sleep 2
left=$(ours)
[ -z "$left" ] || fail "retsu still running 2 s after its JVM was killed: $left"
# Maven reports the crashed fork and exits non-zero; that is expected here.
for _ in $(seq 1 300); do kill -0 "$MVN_PID" 2>/dev/null || break; sleep 0.1; done
kill -9 "$MVN_PID" 2>/dev/null || true
wait "$MVN_PID" 2>/dev/null || true
rm -rf "$ODIR"
echo "orphan: no retsu left 2 s after SIGKILL of its JVM"
echo "orphan: 1 passed, 0 failed"
