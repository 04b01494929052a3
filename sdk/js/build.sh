#!/usr/bin/env bash
# build.sh BIN VERSION DIST: the npm tarballs retsu-VERSION.tgz and
# retsu-linux-x64-VERSION.tgz (carrying BIN as bin/retsu) into DIST.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 BIN VERSION DIST" >&2
  exit 2
fi
BIN=$1 VERSION=$2 DIST=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

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

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -R "$here/packages/retsu" "$stage/retsu"
cp -R "$here/packages/retsu-linux-x64" "$stage/retsu-linux-x64"
cp "$here/README.md" "$stage/retsu/README.md"
mkdir -p "$stage/retsu-linux-x64/bin"
rm -f "$stage/retsu-linux-x64/bin/retsu"
cp "$BIN" "$stage/retsu-linux-x64/bin/retsu"
chmod 0755 "$stage/retsu-linux-x64/bin/retsu" "$stage/retsu/bin/retsu.js"

# Both versions, and the optional dependency, are exactly VERSION.
node - "$stage" "$VERSION" <<'JS'
const fs = require('node:fs');
const [stage, version] = process.argv.slice(2);
for (const name of ['retsu', 'retsu-linux-x64']) {
  const file = `${stage}/${name}/package.json`;
  const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
  pkg.version = version;
  if (pkg.optionalDependencies) {
    for (const dep of Object.keys(pkg.optionalDependencies)) pkg.optionalDependencies[dep] = version;
  }
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
}
JS

export npm_config_cache="$here/.npm-cache"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
for name in retsu-linux-x64 retsu; do
  (cd "$stage/$name" && npm pack --silent --pack-destination "$DIST" >/dev/null)
  tgz="$DIST/$name-$VERSION.tgz"
  [ -f "$tgz" ] || { echo "build.sh: npm pack did not write $tgz" >&2; exit 1; }
  echo "$tgz $(stat -c %s "$tgz") bytes"
done
