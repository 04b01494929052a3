#!/usr/bin/env bash
# sdk/go/example/run.sh DIST            run the sample suite
# sdk/go/example/run.sh DIST startup    print the fixture's start-up time (median of 20)
#
# Extracts retsu-VERSION-x86_64-unknown-linux-gnu.tar.gz from DIST into a
# fresh temporary directory, puts its `retsu` on PATH (RETSU_BIN unset, so
# the fixture finds it as a user's would), copies this sample module next to
# it with its replace directive pointed at sdk/go/retsutest, and runs
# `go test -v` there: aws-sdk-go-v2 against servers started by retsutest,
# the orphan test included. Module versions are pinned by go.mod/go.sum;
# caches live in the git-ignored sdk/go/.cache.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 DIST [startup]" >&2
  exit 64
fi
mode=${2:-suite}
if ! command -v go >/dev/null 2>&1; then
  echo "skipped: no Go"
  exit 0
fi
here="$(cd "$(dirname "$0")" && pwd)"
sdk="$(cd "$here/.." && pwd)"
dist="$(cd "$1" && pwd)"

shopt -s nullglob
tarballs=("$dist"/retsu-*-x86_64-unknown-linux-gnu.tar.gz)
shopt -u nullglob
if [ ${#tarballs[@]} -ne 1 ]; then
  echo "sdk/go: want exactly one retsu-VERSION-x86_64-unknown-linux-gnu.tar.gz in $dist, found ${#tarballs[@]}" >&2
  exit 1
fi
tarball=${tarballs[0]}
name="$(basename "$tarball" .tar.gz)"
version=${name#retsu-}
version=${version%-x86_64-unknown-linux-gnu}

work="$(mktemp -d "${TMPDIR:-/tmp}/retsu-go-example.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
bin="$work/$name/retsu"
[ -x "$bin" ] || { echo "sdk/go: $tarball holds no executable $name/retsu" >&2; exit 1; }
got="$("$bin" --version)"
[ "$got" = "retsu $version" ] || { echo "sdk/go: the tarball's retsu says '$got', not 'retsu $version'" >&2; exit 1; }
echo "sdk/go: retsu $version from $(basename "$tarball") on PATH"

mkdir "$work/project"
cp "$here"/go.mod "$here"/go.sum "$here"/*.go "$work/project/"
export GOMODCACHE="$sdk/.cache/mod" GOCACHE="$sdk/.cache/build" GOPATH="$sdk/.cache/gopath"
export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-modcacherw
cd "$work/project"
go mod edit -replace "github.com/retsu-dev/retsu/sdk/go/retsutest=$sdk/retsutest"
export GOFLAGS="-mod=readonly -modcacherw"
export PATH="$work/$name:$PATH"
unset RETSU_BIN
# Keep the user's AWS settings out of the sample's clients.
unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_SQS
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null

case "$mode" in
  suite)
    go vet ./...
    go test -v -count=1 ./...
    ;;
  startup)
    RETSU_STARTUP_RUNS=20 go test -count=1 -v -run '^TestStartupTime$' ./... | grep -E 'startup|^(ok|FAIL|---)' 
    ;;
  *)
    echo "sdk/go: unknown mode $mode (want startup)" >&2
    exit 64
    ;;
esac
