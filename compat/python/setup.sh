#!/usr/bin/env bash
# Creates the three pinned Python environments of the compatibility suite:
#   compat/.venv-boto3-current  <- requirements-current.txt (JSON protocol)
#   compat/.venv-boto3-query    <- requirements-query.txt   (query protocol)
#   compat/.venv-cli            <- requirements-cli.txt     (aws-cli v1)
#   compat/.venv-aio            <- requirements-aio.txt     (aiobotocore)
#   compat/.venv-celery         <- requirements-celery.txt  (Celery + kombu[sqs], pycurl)
#   compat/.venv-localstack     <- requirements-localstack.txt (awslocal, localstack-client)
#   compat/.venv-ansible        <- requirements-ansible.txt (ansible, its AWS collections, boto3)
# Needs only python3 (with venv, or pip to fetch virtualenv) and PyPI.
# Idempotent: a venv whose requirements file has not changed is left alone.
# Usage: compat/python/setup.sh [current|query|cli|aio|celery|localstack|ansible ...]   (default: all)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
compat="$(dirname "$here")"
PYTHON="${PYTHON:-python3}"

make_venv() {
  local dir="$1"
  if [ -z "${COMPAT_FORCE_VENV_FALLBACK:-}" ] && "$PYTHON" -m venv "$dir" 2>/dev/null && [ -x "$dir/bin/pip" ]; then
    return 0
  fi
  # Debian's python3 without python3-venv has no ensurepip: make the venv
  # without pip, then bootstrap pip from its own wheel (fetched from PyPI with
  # the system pip; a pip wheel can install itself).
  echo "python3 -m venv cannot install pip here; bootstrapping pip from its wheel" >&2
  rm -rf "$dir"
  "$PYTHON" -m venv --without-pip "$dir"
  local wheels
  wheels="$(mktemp -d)"
  "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: -d "$wheels" "pip==24.2"
  local wheel
  wheel="$(ls "$wheels"/pip-*.whl)"
  "$dir/bin/python" "$wheel/pip" install --quiet --no-index "$wheel"
  rm -rf "$wheels"
}

setup_one() {
  local name="$1" req="$2"
  local dir="$compat/.venv-$name"
  local stamp="$dir/.requirements.sha256"
  local want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$dir/bin/python" ]; then
    echo "venv $name: up to date"
    return 0
  fi
  echo "venv $name: installing $(basename "$req")"
  rm -rf "$dir"
  make_venv "$dir"
  if ! "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-input -r "$req"; then
    # pycurl without a wheel for this Python builds from source: it needs
    # libcurl's and OpenSSL's headers (Debian packages), then one retry.
    if grep -q '^pycurl==' "$req" && command -v apt-get >/dev/null 2>&1; then
      echo "venv $name: installing pycurl's build dependencies (apt-get)" >&2
      apt-get install -y -q libcurl4-openssl-dev libssl-dev >/dev/null \
        || { apt-get update -q >/dev/null && apt-get install -y -q libcurl4-openssl-dev libssl-dev >/dev/null; }
      "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req"
    else
      return 1
    fi
  fi
  # Refuse anything that is not exactly what the file pins.
  "$dir/bin/python" - "$req" <<'EOF'
import sys
from importlib import metadata
bad = []
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, version = line.split("==")
    try:
        got = metadata.version(name)
    except metadata.PackageNotFoundError:
        got = None
    if got != version:
        bad.append(f"{name}: want {version}, got {got}")
if bad:
    sys.exit("pinned versions not installed: " + "; ".join(bad))
EOF
  echo "$want" >"$stamp"
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(current query cli aio celery localstack ansible)
for t in "${targets[@]}"; do
  case "$t" in
    current) setup_one boto3-current "$here/requirements-current.txt" ;;
    query) setup_one boto3-query "$here/requirements-query.txt" ;;
    cli) setup_one cli "$here/requirements-cli.txt" ;;
    aio) setup_one aio "$here/requirements-aio.txt" ;;
    celery) setup_one celery "$here/requirements-celery.txt" ;;
    localstack) setup_one localstack "$here/requirements-localstack.txt" ;;
    ansible) setup_one ansible "$here/requirements-ansible.txt" ;;
    *) echo "unknown environment: $t" >&2; exit 2 ;;
  esac
done
