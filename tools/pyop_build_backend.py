"""pyop's PEP 517 build backend: setuptools, with an editable install that type checkers can read.

The repository keeps the generator's code in `scaffold/` while it installs as `pyop_scaffold` (a bare `scaffold` is
another PyPI project's name). setuptools serves such a renamed package in an editable install through an import
hook, which type checkers cannot follow: a generated project's `mypy` then reports `pyop.manager` missing. So the
editable wheel made here holds a plain `.pth` entry naming `build/editable/`, a folder of two directory links
(`pyop` -> `pyop/`, `pyop_scaffold` -> `scaffold/`): Python, mypy, pyright and IDEs read it like an installed
package, and new modules show at once. An explicit `--config-settings editable_mode=...` gets setuptools' own.
"""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every PEP 517 hook, unchanged but build_editable)

# Import name -> the repository folder it is served from (setup.py's package_dir, for the editable install).
EDITABLE_PACKAGES = {"pyop": "pyop", "pyop_scaffold": "scaffold"}
LINKS_DIR = Path("build") / "editable"


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    if config_settings and "editable_mode" in config_settings:
        return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    settings = {**(config_settings or {}), "editable_mode": "lenient"}
    name = _setuptools.build_editable(wheel_directory, settings, metadata_directory)
    links = _link_packages(Path.cwd())
    _replace_pth(Path(wheel_directory) / name, f"{links}\n".encode())
    return name


def _link_packages(root: Path) -> Path:
    """`build/editable/<import name>` -> the package's folder in the checkout, made afresh each install."""
    links = root / LINKS_DIR
    links.mkdir(parents=True, exist_ok=True)
    for import_name, folder in EDITABLE_PACKAGES.items():
        link = links / import_name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(os.path.relpath(root / folder, links), target_is_directory=True)
    return links


def _replace_pth(wheel: Path, content: bytes) -> None:
    """Rewrite the wheel with `content` as its `.pth` file, in place of setuptools' import hook (its finder)."""
    with zipfile.ZipFile(wheel) as source:
        entries = {
            info.filename: source.read(info) for info in source.infolist() if not info.filename.endswith("finder.py")
        }
    pth = next(name for name in entries if name.endswith(".pth"))
    entries[pth] = content
    record_name = next(name for name in entries if name.endswith(".dist-info/RECORD"))
    rows = []
    for name, data in entries.items():
        if name == record_name:
            continue
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{name},sha256={digest},{len(data)}")
    entries[record_name] = ("\n".join([*rows, f"{record_name},,"]) + "\n").encode()
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in entries.items():
            target.writestr(name, data)
