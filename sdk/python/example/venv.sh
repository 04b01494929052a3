# Sourced by run.sh and startup.sh: make_venv DIST makes a fresh venv in
# $work/venv (PATH without Rust), with the pinned test dependencies and the
# retsu-sqs wheel from DIST. Sets $work (removed on exit) and $venv.

make_venv() {
  local dist python=${PYTHON:-python3}
  dist=$(cd "$1" && pwd)
  if ! command -v "$python" >/dev/null 2>&1 || ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "skipped: no Python (python3 with venv)"
    exit 0
  fi
  shopt -s nullglob
  local wheels=("$dist"/retsu_sqs-*-py3-none-manylinux_2_17_x86_64.whl)
  shopt -u nullglob
  if [ ${#wheels[@]} -ne 1 ]; then
    echo "expected one retsu_sqs wheel in $dist, found ${#wheels[@]}" >&2
    exit 1
  fi

  # No Rust: drop cargo's bin directory (and any other holding cargo or rustc).
  local clean_path= dir parts
  IFS=: read -r -a parts <<< "$PATH"
  for dir in "${parts[@]}"; do
    [ -z "$dir" ] && continue
    case "$dir" in */.cargo/bin) continue ;; esac
    if [ -x "$dir/cargo" ] || [ -x "$dir/rustc" ]; then continue; fi
    clean_path=${clean_path:+$clean_path:}$dir
  done
  export PATH=$clean_path
  unset RETSU_BIN CARGO_HOME RUSTUP_HOME
  if command -v cargo >/dev/null 2>&1 || command -v rustc >/dev/null 2>&1; then
    echo "Rust is still on PATH" >&2
    exit 1
  fi
  export PIP_CACHE_DIR="$here/../.cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1

  work=$(mktemp -d "${TMPDIR:-/tmp}/retsu-sqs-example.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  venv=$work/venv
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet -r "$here/requirements.txt"
  "$venv/bin/pip" install --quiet --no-deps "${wheels[0]}"
  echo "installed $(basename "${wheels[0]}") into a fresh venv ($("$venv/bin/python" --version))"
}
