#!/usr/bin/env bash
# Builds dev.retsu:retsu-junit5 carrying BIN into DIST:
#   DIST/retsu-junit5-VERSION.jar and DIST/retsu-junit5-VERSION.pom
# The poms' url and scm are the repository URL of scripts/repository-url.sh.
# usage: sdk/java/build.sh BIN VERSION DIST
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 BIN VERSION DIST" >&2
  exit 2
fi
BIN=$(realpath "$1")
VERSION=$2
DIST=$(realpath "$3")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPOSITORY=$(bash "$HERE/../../scripts/repository-url.sh")

[ -x "$BIN" ] || { echo "build.sh: $BIN is not an executable file" >&2; exit 1; }
[ -d "$DIST" ] || { echo "build.sh: $DIST is not a directory" >&2; exit 1; }
command -v mvn >/dev/null || { echo "build.sh: mvn is missing (Java 17 + Maven 3.8 needed)" >&2; exit 1; }

BIN_VERSION=$("$BIN" --version | awk '{print $2}')
if [ "$BIN_VERSION" != "$VERSION" ]; then
  echo "build.sh: $BIN says version $BIN_VERSION, asked to build $VERSION" >&2
  exit 1
fi

# The binary as a jar resource for this platform (only linux-x86_64 is built today).
RES="$HERE/build/resources"
rm -rf "$RES"
PLATDIR="$RES/dev/retsu/bin/linux-x86_64"
mkdir -p "$PLATDIR"
cp "$BIN" "$PLATDIR/retsu"
chmod 755 "$PLATDIR/retsu"
(cd "$PLATDIR" && sha256sum retsu > retsu.sha256)

# A git-ignored local repository inside sdk/java, so nothing lands in ~/.m2.
REPO="$HERE/.m2/repository"
mkdir -p "$REPO"
cd "$HERE"
# Unit tests run against the bundled binary (RETSU_BIN would bypass it), extracted
# into a cache inside build/ rather than ~/.cache.
env -u RETSU_BIN RETSU_CACHE_DIR="$HERE/build/cache" mvn -B -q -ntp -Dmaven.repo.local="$REPO" -Drevision="$VERSION" \
  -Dretsu.repository="$REPOSITORY" -Dretsu.resources="$RES" clean package

JAR="$HERE/target/retsu-junit5-$VERSION.jar"
POM="$HERE/target/retsu-junit5.pom"
[ -f "$JAR" ] || { echo "build.sh: $JAR was not built" >&2; exit 1; }

# Every version inside must be VERSION, and both poms name the repository.
# (jar, from the JDK, rather than unzip, which a clean machine may lack)
PEEK="$HERE/build/jar-check"
rm -rf "$PEEK" && mkdir -p "$PEEK"
(cd "$PEEK" && jar xf "$JAR" META-INF/maven/dev.retsu/retsu-junit5/pom.xml dev/retsu/bin/linux-x86_64/retsu)
INNER=$(grep -m1 -o "<version>[^<]*</version>" "$PEEK/META-INF/maven/dev.retsu/retsu-junit5/pom.xml" || true)
OUTER=$(grep -m1 -o "<version>[^<]*</version>" "$POM")
for v in "$INNER" "$OUTER"; do
  if [ "$v" != "<version>$VERSION</version>" ]; then
    echo "build.sh: a pom carries $v, not $VERSION" >&2
    exit 1
  fi
done
for pom in "$PEEK/META-INF/maven/dev.retsu/retsu-junit5/pom.xml" "$POM"; do
  if ! grep -qF "<url>$REPOSITORY</url>" "$pom" || grep -qF '${retsu.repository}' "$pom"; then
    echo "build.sh: $pom does not name the repository $REPOSITORY" >&2
    exit 1
  fi
done
cmp -s "$PEEK/dev/retsu/bin/linux-x86_64/retsu" "$BIN" || { echo "build.sh: the jar does not carry $BIN" >&2; exit 1; }
rm -rf "$PEEK"

cp "$JAR" "$DIST/retsu-junit5-$VERSION.jar"
cp "$POM" "$DIST/retsu-junit5-$VERSION.pom"
ls -l "$DIST/retsu-junit5-$VERSION.jar" "$DIST/retsu-junit5-$VERSION.pom"
