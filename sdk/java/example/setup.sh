# Sourced by run.sh and startup.sh: a fresh local Maven repository with the
# retsu-junit5 jar and pom of DIST installed, and a copy of this sample project.
# Sets VERSION, WORK, REPO, PROJECT, MVN (array).

DIST=$(realpath "$1")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

shopt -s nullglob
jars=("$DIST"/retsu-junit5-*.jar)
shopt -u nullglob
if [ ${#jars[@]} -ne 1 ]; then
  echo "expected one retsu-junit5-VERSION.jar in $DIST, found ${#jars[@]}" >&2
  exit 1
fi
JAR=${jars[0]}
VERSION=$(basename "$JAR" .jar)
VERSION=${VERSION#retsu-junit5-}
POM="$DIST/retsu-junit5-$VERSION.pom"
[ -f "$POM" ] || { echo "missing $POM" >&2; exit 1; }

WORK="$HERE/.work"          # git-ignored
rm -rf "$WORK"
mkdir -p "$WORK"
REPO="$WORK/repo"
# Third-party artifacts (JUnit, the AWS SDK, Maven plugins) come from a cache kept
# beside the build's; the fresh repository is seeded from it by hard links. Nothing
# of dev.retsu is seeded: retsu-junit5 comes from DIST only.
CACHE="$HERE/../.m2/example-cache"
mkdir -p "$CACHE"
rm -rf "$CACHE/dev/retsu"
cp -al "$CACHE" "$REPO"

PROJECT="$WORK/project"
mkdir -p "$PROJECT"
cp -r "$HERE/pom.xml" "$HERE/src" "$PROJECT/"

MVN=(mvn -B -ntp -Dmaven.repo.local="$REPO" -Dretsu.version="$VERSION")

"${MVN[@]}" -q org.apache.maven.plugins:maven-install-plugin:3.1.4:install-file \
  -Dfile="$JAR" -DpomFile="$POM"
INSTALLED="$REPO/dev/retsu/retsu-junit5/$VERSION/retsu-junit5-$VERSION.jar"
cmp -s "$JAR" "$INSTALLED" || { echo "install-file did not install $JAR" >&2; exit 1; }
echo "installed $(basename "$JAR") from $DIST into $REPO"

# The bundled binary is what is tested: no RETSU_BIN, and a fresh extraction cache.
unset RETSU_BIN
export RETSU_CACHE_DIR="$WORK/cache"

# Keep what this run downloaded for the next run (never dev.retsu).
save_cache() {
  cp -aln "$REPO/." "$CACHE/" 2>/dev/null || true
  rm -rf "$CACHE/dev/retsu"
}
