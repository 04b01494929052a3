#!/usr/bin/env bash
# build.sh BIN VERSION DIST: builds the retsu-sqs wheel carrying BIN, with
# version VERSION, into DIST. Builds no Rust: BIN is the static binary.
# Tools (build, hatchling) are pinned in build-constraints.txt and installed
# into a throwaway venv; pip's downloads are cached in .cache/pip. The staged
# pyproject.toml gets [project.urls] Repository from scripts/repository-url.sh.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 BIN VERSION DIST" >&2
  exit 2
fi
bin=$1 version=$2 dist=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -x "$bin" ] || { echo "build.sh: $bin is not an executable file" >&2; exit 1; }
[ -d "$dist" ] || { echo "build.sh: $dist is not a directory" >&2; exit 1; }
dist=$(cd "$dist" && pwd)
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
# A canonical PEP 440 version, so the wheel's name carries it unchanged.
if ! [[ $version =~ ^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$ ]]; then
  echo "build.sh: VERSION must be a canonical PEP 440 version such as 0.1.0, not $version" >&2
  exit 2
fi

# Every artifact's version is the binary's own.
bin_version=$("$bin" --version 2>/dev/null || true)
if [ "$bin_version" != "retsu $version" ]; then
  echo "build.sh: $bin --version says '$bin_version', not 'retsu $version'" >&2
  exit 1
fi

repository=$(bash "$here/../../scripts/repository-url.sh")
if grep -q '^\[project\.urls\]' "$here/pyproject.toml"; then
  echo "build.sh: pyproject.toml has a [project.urls] table; build.sh appends the only one" >&2
  exit 1
fi

python=${PYTHON:-python3}
export PIP_CACHE_DIR="$here/.cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1
work=$(mktemp -d "${TMPDIR:-/tmp}/retsu-sqs-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Stage the sources with the binary and the version, so the tree stays clean.
stage=$work/src
mkdir -p "$stage/bin"
cp -R "$here/src" "$here/pyproject.toml" "$here/hatch_build.py" "$here/README.md" "$stage/"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
for lic in "$here"/../../LICENSE-MIT "$here"/../../LICENSE-APACHE; do
  if [ -f "$lic" ]; then cp "$lic" "$stage/"; fi
done
cp "$bin" "$stage/bin/retsu"
chmod 0755 "$stage/bin/retsu"
printf '# Written by build.sh.\n__version__ = "%s"\n' "$version" > "$stage/src/retsu_sqs/_version.py"
printf '\n# Written by build.sh.\n[project.urls]\nRepository = "%s"\n' "$repository" >> "$stage/pyproject.toml"

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet -c "$here/build-constraints.txt" build hatchling
"$work/venv/bin/python" -m build --wheel --no-isolation --outdir "$work/out" "$stage"

wheel=$(ls "$work/out"/*.whl)
name=$(basename "$wheel")
# Check what came out: name, tag, version, repository, and the binary as a script.
"$work/venv/bin/python" - "$wheel" "$version" "$repository" <<'PY'
import sys, zipfile
wheel, version, repository = sys.argv[1], sys.argv[2], sys.argv[3]
expected = f"retsu_sqs-{version}-py3-none-manylinux_2_17_x86_64.whl"
name = wheel.rsplit("/", 1)[-1]
assert name == expected, f"wheel is {name}, expected {expected}"
with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    script = f"retsu_sqs-{version}.data/scripts/retsu"
    assert script in names, f"{script} missing from the wheel: {names}"
    assert (z.getinfo(script).external_attr >> 16) & 0o111, "the binary is not executable in the wheel"
    meta = z.read(f"retsu_sqs-{version}.dist-info/METADATA").decode()
    assert f"\nVersion: {version}\n" in meta, "wrong version in METADATA"
    assert f"\nProject-URL: Repository, {repository}\n" in meta, "no Project-URL: Repository in METADATA"
    ep = z.read(f"retsu_sqs-{version}.dist-info/entry_points.txt").decode()
    assert "[pytest11]" in ep, "no pytest11 entry point"
PY
cp "$wheel" "$dist/$name"
echo "built $dist/$name ($(stat -c %s "$dist/$name") bytes)"
