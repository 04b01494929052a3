#!/usr/bin/env bash
# sdk/go/build.sh BIN VERSION DIST
#
# Go modules are published as source (a tag of this repository), so the Go
# wrapper has no artifact of its own: users get the binary from the release
# tarball retsu-VERSION-x86_64-unknown-linux-gnu.tar.gz, which
# scripts/package.sh builds. This script only checks the module (gofmt,
# go vet, go build, its unit tests) and that BIN is version VERSION, so the
# release script can call every language alike. It writes nothing to DIST.
# Caches live in the git-ignored sdk/go/.cache.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 BIN VERSION DIST" >&2
  exit 64
fi
bin=$1 version=$2 dist=$3
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v go >/dev/null 2>&1; then
  echo "skipped: no Go"
  exit 0
fi
[ -d "$dist" ] || { echo "sdk/go: DIST $dist is not a directory" >&2; exit 1; }
got="$("$bin" --version)"
if [ "$got" != "retsu $version" ]; then
  echo "sdk/go: $bin --version says '$got', not 'retsu $version'" >&2
  exit 1
fi
export GOMODCACHE="$here/.cache/mod" GOCACHE="$here/.cache/build" GOPATH="$here/.cache/gopath"
export GOFLAGS="-mod=readonly -modcacherw" GOTOOLCHAIN=local GOWORK=off
cd "$here/retsutest"
unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
  echo "sdk/go: not gofmt-ed: $unformatted" >&2
  exit 1
fi
go vet ./...
go build ./...
go test -count=1 ./...
echo "sdk/go: module github.com/retsu-dev/retsu/sdk/go/retsutest checked for retsu $version (no artifact: Go users take retsu-$version-x86_64-unknown-linux-gnu.tar.gz)"
