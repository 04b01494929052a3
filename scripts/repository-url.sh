#!/usr/bin/env bash
# Prints the project's repository URL. It is written in one place only, the
# root Cargo.toml's [workspace.package] repository: both crates inherit it
# (repository.workspace = true) and sdk/{python,js,java}/build.sh stamp what
# this prints into the manifest each of them packages (pyproject.toml's
# [project.url], package.json's repository, the pom's url and scm).
set -euo pipefail
manifest=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/Cargo.toml
# The repository = "..." line of the [workspace.package] table (up to the next table).
url=$(sed -n '/^\[workspace\.package\]$/,/^\[/ s/^repository = "\([^"]*\)"$/\1/p' "$manifest")
if [ -z "$url" ] || [ "$(printf '%s\n' "$url" | wc -l)" -ne 1 ] || ! [[ $url =~ ^https://[^[:space:]]+$ ]]; then
  echo "repository-url.sh: no single repository = \"https://...\" under [workspace.package] in $manifest" >&2
  exit 1
fi
printf '%s\n' "$url"
