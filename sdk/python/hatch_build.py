"""Hatchling build hook: the wheel carries the static retsu binary as the
environment's `retsu` script and is tagged for manylinux x86_64 (the binary
is static, so the tag's glibc floor is the only one).

The binary is RETSU_WHEEL_BINARY, else bin/retsu beside this file (build.sh
stages it there); building Rust is not this build's business.
"""

import os
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

TAG = "py3-none-manylinux_2_17_x86_64"


class RetsuBinaryHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version, build_data):
        if self.target_name != "wheel" or version == "editable":
            return
        binary = Path(os.environ.get("RETSU_WHEEL_BINARY") or Path(self.root) / "bin" / "retsu")
        if not binary.is_file() or not os.access(binary, os.X_OK):
            raise FileNotFoundError(
                f"no executable retsu binary at {binary}: set RETSU_WHEEL_BINARY or use build.sh BIN VERSION DIST"
            )
        build_data["pure_python"] = False
        build_data["tag"] = TAG
        build_data["shared_scripts"][str(binary.resolve())] = "retsu"
