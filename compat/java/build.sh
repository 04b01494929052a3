#!/usr/bin/env bash
# Builds the Java clients of the compatibility matrix (compat/java/*) with
# Maven, every artifact from the versions pinned in compat/java/pom.xml and
# the module poms, into the git-ignored local repository compat/java/.m2.
# Each module then has target/classes and target/classpath.txt, and
# compat/run.sh starts it with `java -cp` (no Maven at run time).
# Skips Maven when no pom or source changed since the last good build.
# Exit: 0 built (or up to date), 3 no Java/Maven on this machine, else failed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "compat/java: '$tool' not found (Java 17+ and Maven are needed)" >&2
    exit 3
  fi
done
cd "$here"
stamp=".m2/.build.sha256"
want="$(find . -path ./.m2 -prune -o -path '*/target' -prune -o \( -name pom.xml -o -name '*.java' \) -type f -print | sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && ls ./*/target/classpath.txt >/dev/null 2>&1 \
   && [ "$(ls ./*/target/classpath.txt | wc -l)" -ge 6 ]; then
  echo "compat/java: up to date"
  exit 0
fi
echo "compat/java: mvn package (local repository compat/java/.m2)"
mvn -B -q -Dmaven.repo.local="$here/.m2" package
mkdir -p .m2
echo "$want" >"$stamp"
