#!/usr/bin/env bash
# run.sh DIST [PYTEST ARGS]: installs the retsu-sqs wheel from DIST into a fresh venv (no
# Rust on PATH) with the pinned test dependencies, and runs the sample suite
# (boto3, aiobotocore, bad input, the orphan test) with pytest.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 DIST [pytest args...]" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dist=$(cd "$1" && pwd)
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1 || ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "skipped: no Python (python3 with venv)"
  exit 0
fi
shopt -s nullglob
wheels=("$dist"/retsu_sqs-*-py3-none-manylinux_2_17_x86_64.whl)
if [ ${#wheels[@]} -ne 1 ]; then
  echo "run.sh: expected one retsu_sqs wheel in $dist, found ${#wheels[@]}" >&2
  exit 1
fi

# No Rust: drop cargo's bin directory (and any other holding cargo/rustc) from PATH.
clean_path=
IFS=: read -r -a parts <<< "$PATH"
for dir in "${parts[@]}"; do
  [ -z "$dir" ] && continue
  case "$dir" in "$HOME/.cargo/bin"|*/.cargo/bin) continue ;; esac
  if [ -x "$dir/cargo" ] || [ -x "$dir/rustc" ]; then continue; fi
  clean_path=${clean_path:+$clean_path:}$dir
done
export PATH=$clean_path
unset RETSU_BIN CARGO_HOME RUSTUP_HOME
export PIP_CACHE_DIR="$here/../.cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1

work=$(mktemp -d "${TMPDIR:-/tmp}/retsu-sqs-example.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet -r "$here/requirements.txt"
"$work/venv/bin/pip" install --quiet --no-deps "${wheels[0]}"
if command -v cargo >/dev/null 2>&1; then
  echo "run.sh: cargo is still on PATH" >&2
  exit 1
fi

# Run from a copy of the sample project, so nothing imports the source tree.
cp -R "$here/tests" "$here/orphan" "$here/pytest.ini" "$work/"
cd "$work"
shift
"$work/venv/bin/python" -m pytest -ra "$@"
