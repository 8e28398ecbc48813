"""pyop's PEP 517 build backend: setuptools, with editable installs made of static links.

The repository keeps the generator's code in `scaffold/` while it installs as `pyop_scaffold` (a bare `scaffold` is
another PyPI project's name). setuptools serves such a renamed package in an editable install through an import
hook, which type checkers cannot follow: a generated project's `mypy` then reports `pyop.manager` missing. Its
`strict` editable mode instead links every file of the wheel into a tree that a plain `.pth` entry points at, which
mypy, pyright and IDEs read like an installed package. Edits to existing files show at once; a new module needs a
re-install (`scripts/venv.sh` re-installs when the file list changes). An explicit
`--config-settings editable_mode=...` still wins.
"""

from __future__ import annotations

from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every PEP 517 hook, unchanged but build_editable)


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    settings = {"editable_mode": "strict", **(config_settings or {})}
    return _setuptools.build_editable(wheel_directory, settings, metadata_directory)
