#!/usr/bin/env bash
# Builds the Go clients of the compatibility matrix into compat/go/.cache/bin:
#   sdkv2        aws-sdk-go-v2 service/sqs (compat/go/sdkv2/go.mod)
#   sdkv1-query  aws-sdk-go v1.46.7 (compat/go/sdkv1/go.mod)
#   sdkv1-json   aws-sdk-go v1.55.8 (compat/go/sdkv1/go.last.mod)
# Every module version is pinned by its go.mod/go.sum; the module and build
# caches live in the git-ignored compat/go/.cache, and `go build` is
# incremental, so a second run costs a second or two.
# Exit: 0 built, 3 no Go on this machine, else failed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v go >/dev/null 2>&1; then
  echo "compat/go: 'go' not found (Go 1.24+ is needed)" >&2
  exit 3
fi
export GOMODCACHE="$here/.cache/mod" GOCACHE="$here/.cache/build" GOPATH="$here/.cache/gopath"
export GOFLAGS=-mod=readonly GOTOOLCHAIN=local GOWORK=off
bin="$here/.cache/bin"
mkdir -p "$bin"
echo "compat/go: go build (caches in compat/go/.cache)"
(cd "$here/sdkv2" && go build -o "$bin/sdkv2" .)
(cd "$here/sdkv1" && go build -o "$bin/sdkv1-query" . && go build -modfile=go.last.mod -o "$bin/sdkv1-json" .)
