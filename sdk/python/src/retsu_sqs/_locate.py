"""Finding the ``retsu`` binary.

Order: the wheel's own binary, installed next to this package (the scripts
directory of the install scheme whose library directory holds the package,
user scheme included, as ruff's ``find_ruff_bin`` does; then a
``pip install --target`` tree's ``bin/``); else
``RETSU_BIN``; else ``PATH``. A missing or non-executable binary raises
:class:`BinaryNotFoundError` naming every place looked.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

from ._errors import BinaryNotFoundError

EXE = "retsu" + (sysconfig.get_config_var("EXE") or "")
PACKAGE_DIR = Path(__file__).resolve().parent


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _scheme_scripts() -> Iterator[Tuple[str, Path]]:
    """The scripts directory of every install scheme whose library directory
    holds this package (the default scheme, a venv's, the user scheme...)."""
    site_dir = PACKAGE_DIR.parent
    schemes: List[Optional[str]] = [None]
    if sys.version_info >= (3, 10):
        schemes.append(sysconfig.get_preferred_scheme("user"))
    schemes.extend(sysconfig.get_scheme_names())
    seen = set()
    for scheme in schemes:
        try:
            paths = sysconfig.get_paths() if scheme is None else sysconfig.get_paths(scheme)
        except KeyError:
            continue
        libs = [paths.get("purelib"), paths.get("platlib")]
        if not any(lib and _same(Path(lib), site_dir) for lib in libs):
            continue
        scripts = Path(paths["scripts"]) / EXE
        if scripts in seen:
            continue
        seen.add(scripts)
        yield f"scripts of install scheme {scheme or 'default'}", scripts
    # pip install --target DIR puts scripts in DIR/bin.
    yield "bin/ beside the package (pip --target)", site_dir / "bin" / EXE


def _usable(path: Path) -> Optional[str]:
    """None when the path is an executable file, else why not."""
    if not path.exists():
        return "not there"
    if not path.is_file():
        return "not a file"
    if not os.access(str(path), os.X_OK):
        return "not executable"
    return None


def find_retsu_bin() -> str:
    """The path of the ``retsu`` binary to run; raises
    :class:`BinaryNotFoundError` (a ``FileNotFoundError``) naming every place
    looked, with why each did not do."""
    looked: List[str] = []
    candidates = list(_scheme_scripts())
    if len(candidates) == 1:  # only the pip --target guess
        looked.append(f"install schemes: none has {PACKAGE_DIR.parent} as its library directory")
    for where, path in candidates:
        problem = _usable(path)
        if problem is None:
            return str(path)
        looked.append(f"{path} ({where}): {problem}")

    env = os.environ.get("RETSU_BIN")
    if env:
        path = Path(env)
        problem = _usable(path)
        if problem is None:
            return str(path)
        looked.append(f"RETSU_BIN={env}: {problem}")
    else:
        looked.append("RETSU_BIN: not set")

    found = shutil.which(EXE)
    if found:
        return found
    looked.append(f"PATH ({os.environ.get('PATH', '')}): no executable {EXE}")
    raise BinaryNotFoundError(looked)


def check_binary(binary: str) -> str:
    """An explicitly given binary: a path, or a name looked up on PATH."""
    if os.sep in binary or (os.altsep and os.altsep in binary):
        problem = _usable(Path(binary))
        if problem is None:
            return binary
        raise BinaryNotFoundError([f"{binary} (given as binary=): {problem}"])
    found = shutil.which(binary)
    if found:
        return found
    raise BinaryNotFoundError([f"{binary} (given as binary=) on PATH ({os.environ.get('PATH', '')}): not there"])
