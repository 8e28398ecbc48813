"""Reading and writing a project's files through a ChangeSet, with the one-line errors the CLI promises.

A project is the user's folder, so any file may be something pyop did not write: not UTF-8, a folder where a file
belongs, a file where a folder belongs, a read-only folder. Each is found before the first write and named in one
line (exit code 2), instead of a traceback halfway through `ChangeSet.apply`.
"""

from __future__ import annotations

import os
from pathlib import Path

from pyop_scaffold.errors import ProjectError
from pyop_scaffold.render.changeset import ChangeSet, PlannedFile


def read_text(changes: ChangeSet, path: str) -> str | None:
    """The text `path` will have after the planned changes (None if missing); bytes that are not UTF-8 are an error."""
    try:
        return changes.read_text(path)
    except UnicodeDecodeError as exc:
        raise ProjectError(f"cannot read {path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc
    except OSError as exc:
        raise ProjectError(f"cannot read {path}: {exc.strerror or exc}") from exc


def read_file_text(root: Path, path: str) -> str | None:
    """A project file as UTF-8 text, straight from the disk (None if it is not a file)."""
    target = root / path
    if not target.is_file():
        return None
    try:
        return target.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ProjectError(f"cannot read {path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc
    except OSError as exc:
        raise ProjectError(f"cannot read {path}: {exc.strerror or exc}") from exc


def check_targets(changes: ChangeSet) -> None:
    """Every planned write can happen: its target is not a folder, and the nearest existing folder above it is a
    writable folder. Checked for all files before any is written, so a refusal leaves the project as it was."""
    for planned in changes.writes():
        target = changes.root / planned.path
        if target.is_dir():
            raise ProjectError(f"cannot write {planned.path}: it is a folder; move it out of the way")
        parent = target.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        shown = _relative(changes.root, parent)
        if not parent.is_dir():
            raise ProjectError(f"cannot write {planned.path}: {shown} is a file, not a folder; move it out of the way")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise ProjectError(f"cannot write {planned.path}: the folder {shown} is not writable")


def apply(changes: ChangeSet) -> list[PlannedFile]:
    """`changes.apply()` after `check_targets`; a file-system error that still happens is one line, not a traceback."""
    check_targets(changes)
    try:
        return changes.apply()
    except OSError as exc:
        where = _relative(changes.root, Path(exc.filename)) if exc.filename else "the project"
        raise ProjectError(f"cannot write {where}: {exc.strerror or exc}") from exc


def _relative(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix() or "."
    except ValueError:
        return str(path)
