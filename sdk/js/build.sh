#!/usr/bin/env bash
# build.sh BIN VERSION DIST: the npm tarballs retsu-sqs-VERSION.tgz and
# retsu-sqs-linux-x64-VERSION.tgz (carrying BIN as bin/retsu) into DIST.
# The staged package.json files get VERSION and the repository URL
# (scripts/repository-url.sh); the committed ones carry neither.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 BIN VERSION DIST" >&2
  exit 2
fi
BIN=$1 VERSION=$2 DIST=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MAIN=retsu-sqs PLATFORM=retsu-sqs-linux-x64

[ -x "$BIN" ] || { echo "build.sh: $BIN is not an executable file" >&2; exit 1; }
[ -d "$DIST" ] || { echo "build.sh: $DIST is not a directory" >&2; exit 1; }
command -v npm >/dev/null || { echo "build.sh: npm is not installed" >&2; exit 1; }
if ! [[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "build.sh: $VERSION is not a semver version" >&2
  exit 1
fi
bin_version=$("$BIN" --version | awk '{print $2}')
if [ "$bin_version" != "$VERSION" ]; then
  echo "build.sh: $BIN says version $bin_version, not $VERSION" >&2
  exit 1
fi
DIST=$(cd "$DIST" && pwd)
REPOSITORY=$(bash "$here/../../scripts/repository-url.sh")

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -R "$here/packages/$MAIN" "$stage/$MAIN"
cp -R "$here/packages/$PLATFORM" "$stage/$PLATFORM"
cp "$here/README.md" "$stage/$MAIN/README.md"
mkdir -p "$stage/$PLATFORM/bin"
rm -f "$stage/$PLATFORM/bin/retsu"
cp "$BIN" "$stage/$PLATFORM/bin/retsu"
chmod 0755 "$stage/$PLATFORM/bin/retsu" "$stage/$MAIN/bin/retsu.js"

# Both versions, and the optional dependency, are exactly VERSION; both name
# the repository (in the git+URL.git form npm would otherwise rewrite it to).
node - "$stage" "$VERSION" "$REPOSITORY" "$MAIN" "$PLATFORM" <<'JS'
const fs = require('node:fs');
const [stage, version, repository, ...names] = process.argv.slice(2);
for (const name of names) {
  const file = `${stage}/${name}/package.json`;
  const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (pkg.name !== name) throw new Error(`${file} names ${pkg.name}, not ${name}`);
  pkg.version = version;
  if (pkg.optionalDependencies) {
    for (const dep of Object.keys(pkg.optionalDependencies)) pkg.optionalDependencies[dep] = version;
  }
  pkg.repository = { type: 'git', url: `git+${repository.replace(/\.git$/, '')}.git` };
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
}
JS

export npm_config_cache="$here/.npm-cache"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
for name in "$PLATFORM" "$MAIN"; do
  (cd "$stage/$name" && npm pack --silent --pack-destination "$DIST" >/dev/null)
  tgz="$DIST/$name-$VERSION.tgz"
  [ -f "$tgz" ] || { echo "build.sh: npm pack did not write $tgz" >&2; exit 1; }
  # What came out: its package.json's name, version and repository.
  tar -xzOf "$tgz" package/package.json | node -e '
    const [name, version, repository, platform] = process.argv.slice(1);
    const pkg = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
    const problems = [];
    if (pkg.name !== name) problems.push(`name ${pkg.name}`);
    if (pkg.version !== version) problems.push(`version ${pkg.version}`);
    if (!pkg.repository || !pkg.repository.url.includes(repository.replace(/\.git$/, ""))) problems.push(`repository ${JSON.stringify(pkg.repository)}`);
    if (pkg.optionalDependencies && pkg.optionalDependencies[platform] !== version) problems.push(`optionalDependencies ${JSON.stringify(pkg.optionalDependencies)}`);
    if (problems.length) { console.error(`build.sh: ${name}-${version}.tgz has ${problems.join(", ")}`); process.exit(1); }
  ' "$name" "$VERSION" "$REPOSITORY" "$PLATFORM"
  echo "$tgz $(stat -c %s "$tgz") bytes"
done
