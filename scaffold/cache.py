"""pyop's per-user cache directory: `$XDG_CACHE_HOME/pyop`, else `~/.cache/pyop`.

What pyop keeps there between runs (celpy's analysed grammar, parsed CEL rules, `make manifests` stamps) is read
back as trusted data, so the directory must be the user's own and closed to others' writes (POSIX only); where it
is not, or cannot be made, there is no cache and every run does the work itself.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def cache_directory() -> Path | None:
    """pyop's cache directory of the user, made if missing; None unless it is the user's own and closed to
    others' writes."""
    try:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        directory = Path(base) / "pyop"
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = directory.stat()
    except (OSError, RuntimeError):  # RuntimeError: no home directory to be found
        return None
    getuid = getattr(os, "getuid", None)
    if getuid is None or info.st_uid != getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None  # another user could plant a pickle there
    return directory
