#!/usr/bin/env bash
# Builds every artifact Retsu ships into dist/, all carrying the same static
# binary and the same version (the one `retsu --version` prints):
#
#   retsu-<v>-x86_64-unknown-linux-gnu.tar.gz   the binary, README, licences
#   retsu_sqs-<v>-py3-none-manylinux_2_17_x86_64.whl   Python (sdk/python)
#   retsu-sqs-<v>.tgz, retsu-sqs-linux-x64-<v>.tgz     npm (sdk/js)
#   retsu-junit5-<v>.jar, retsu-junit5-<v>.pom         Maven (sdk/java)
#   retsu-<v>-image-amd64.tar.gz                       the container image
#                                                      (only where podman is)
#   SHA256SUMS
#
# Each language's own sdk/<language>/build.sh BIN VERSION DIST makes its
# artifact; the Go module (sdk/go) ships as source and finds the binary of
# the release tarball on PATH, so its build.sh only vets it. A language
# whose toolchain is missing is skipped, and this says so.
#
#   bash scripts/package.sh            # everything into dist/
#   RETSU_BIN=path bash scripts/package.sh   # package this binary instead of building
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=x86_64-unknown-linux-gnu
DIST=dist
say() { echo "== package: $*"; }
fail() { echo "!! package FAILED: $*" >&2; exit 1; }

if [ -n "${RETSU_BIN:-}" ]; then
  BIN=$RETSU_BIN
else
  say "building the static binary ($TARGET, +crt-static, symbols stripped)"
  scripts/build-static.sh "$TARGET"
  BIN=target/$TARGET/release/retsu
fi
[ -x "$BIN" ] || fail "no executable binary at $BIN"
if ldd "$BIN" >/dev/null 2>&1 && ! ldd "$BIN" 2>&1 | grep -q "statically linked"; then
  fail "$BIN is dynamically linked: $(ldd "$BIN" | tr '\n' ' ')"
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
VERSION=$("$BIN" --version | awk '{print $2}')
[ -n "$VERSION" ] || fail "cannot read the version from $BIN --version"
cargo_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
[ "$VERSION" = "$cargo_version" ] || fail "binary says $VERSION, Cargo.toml says $cargo_version"
say "version $VERSION, binary $(stat -c %s "$BIN") bytes"

rm -rf "$DIST"
mkdir -p "$DIST"
DIST=$(cd "$DIST" && pwd)

# ------------------------------------------------------------ release tarball
name=retsu-$VERSION-$TARGET
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
cp "$BIN" "$stage/$name/retsu"
cp README.md LICENSE-MIT LICENSE-APACHE "$stage/$name/"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$DIST/$name.tar.gz" "$name"

# ------------------------------------------------------------ each language
SKIPPED=()
build_language() { # language, tool that must exist...
  local language=$1; shift
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      SKIPPED+=("$language (no $tool)")
      echo "NOTE: '$tool' not found: the $language package was skipped"
      return 0
    fi
  done
  say "$language"
  bash "sdk/$language/build.sh" "$BIN" "$VERSION" "$DIST"
}
build_language python python3
build_language js node npm
build_language java java mvn
build_language go go

# ------------------------------------------------------------ container image
if command -v podman >/dev/null 2>&1; then
  say "container image (podman, the Dockerfile's prebuilt stage)"
  context=$stage/context
  mkdir -p "$context/docker/prebuilt/data"
  cp "$BIN" "$context/docker/prebuilt/retsu"
  podman build --quiet --format docker --build-arg BINARY=prebuilt --build-arg TARGETARCH=amd64 \
    -f Dockerfile -t "localhost/retsu:$VERSION" "$context" >/dev/null
  # gzip: `docker load -i` and `podman load -i` read it as it is.
  podman save --quiet --format docker-archive -o "$stage/image.tar" "localhost/retsu:$VERSION"
  gzip -9 -n -c "$stage/image.tar" > "$DIST/retsu-$VERSION-image-amd64.tar.gz"
else
  SKIPPED+=("container image (no podman)")
  echo "NOTE: 'podman' not found: the container image tarball was skipped"
fi

# ------------------------------------------------------------ versions, sums
for f in "$DIST"/*; do
  base=$(basename "$f")
  case "$base" in *"$VERSION"*) ;; *) fail "$base does not carry version $VERSION" ;; esac
done
(cd "$DIST" && sha256sum -- * > SHA256SUMS)

say "artifacts in $DIST (bytes, as shipped):"
(cd "$DIST" && for f in *; do printf '  %10s  %s\n' "$(stat -c %s "$f")" "$f"; done)
if [ ${#SKIPPED[@]} -gt 0 ]; then
  for s in "${SKIPPED[@]}"; do echo "NOTE: skipped: $s"; done
fi
