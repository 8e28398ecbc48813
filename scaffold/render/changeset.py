"""A planned set of file writes applied all or nothing, with pyop's rules about the user's files.

Commands first compute every file they would create or change (in memory), then `ChangeSet.apply` checks for
conflicts before touching the disk, stages every file next to its target and renames them into place. A failure
while renaming restores what was there, so a command either completes or leaves the project as it was.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field
from pathlib import Path

from pyop_scaffold.errors import ConflictError


class IfExists(enum.Enum):
    """What to do when a templated file is already in the project."""

    ERROR = "error"  # the file belongs to this very scaffold: refuse without --force
    SKIP = "skip"  # shared scaffolding (an API package's __init__): keep the user's copy


class Action(enum.Enum):
    CREATE = "create"
    UPDATE = "update"
    OVERWRITE = "overwrite"
    SKIP = "skip"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class PlannedFile:
    path: str
    content: bytes
    action: Action


@dataclass
class ChangeSet:
    """Files a command wants in `root`. Paths are relative and use '/'."""

    root: Path
    force: bool = False
    planned: dict[str, PlannedFile] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)

    def add_file(self, path: str, content: bytes | str, if_exists: IfExists = IfExists.ERROR) -> None:
        """Plan a new file from a template; existing files are skipped or conflict unless --force."""
        data = content.encode("utf-8") if isinstance(content, str) else content
        current = self.read(path)
        if current is None:
            action = Action.CREATE
        elif current == data:
            action = Action.UNCHANGED
        elif self.force:
            action = Action.OVERWRITE
        elif if_exists is IfExists.SKIP:
            action = Action.SKIP
        else:
            self.conflicts.append(path)
            action = Action.SKIP
        self.planned[path] = PlannedFile(path, data, action)

    def update_file(self, path: str, content: bytes | str) -> None:
        """Plan an edit of a shared file (made by an insertion or a round-trip YAML edit that keeps the user's work)."""
        data = content.encode("utf-8") if isinstance(content, str) else content
        previous = self.planned.get(path)
        current = self.read(path)
        action: Action
        if previous is not None and previous.action in (Action.CREATE, Action.OVERWRITE):
            action = previous.action  # an edit of a file this very command writes: still a new file
        elif current is None:
            action = Action.CREATE
        elif (self.root / path).is_file() and (self.root / path).read_bytes() == data:
            action = Action.UNCHANGED
        else:
            action = Action.UPDATE
        self.planned[path] = PlannedFile(path, data, action)

    def read(self, path: str) -> bytes | None:
        """The content a path will have after the planned changes (a planned write wins over the disk)."""
        if path in self.planned and self.planned[path].action is not Action.SKIP:
            return self.planned[path].content
        target = self.root / path
        return target.read_bytes() if target.is_file() else None

    def read_text(self, path: str) -> str | None:
        data = self.read(path)
        return None if data is None else data.decode("utf-8")

    def writes(self) -> list[PlannedFile]:
        return [p for p in self.planned.values() if p.action in (Action.CREATE, Action.UPDATE, Action.OVERWRITE)]

    def apply(self) -> list[PlannedFile]:
        """Write every planned file, or nothing: conflicts are reported before the disk is touched."""
        if self.conflicts:
            names = ", ".join(sorted(self.conflicts))
            raise ConflictError(f"refusing to overwrite existing file(s) {names}: pass --force to overwrite")
        writes = sorted(self.writes(), key=lambda p: p.path)
        staged: list[tuple[Path, Path]] = []
        created_dirs: list[Path] = []
        try:
            for planned in writes:
                target = self.root / planned.path
                created_dirs.extend(_make_parents(target.parent))
                temp = target.with_name(f".{target.name}.pyop-tmp")
                temp.write_bytes(planned.content)
                _copy_mode(planned.path, target, temp)
                staged.append((temp, target))
        except OSError:
            for temp, _ in staged:
                temp.unlink(missing_ok=True)
            _remove_dirs(created_dirs)
            raise
        _commit(staged)
        return sorted(self.planned.values(), key=lambda p: p.path)


def _make_parents(directory: Path) -> list[Path]:
    missing = []
    current = directory
    while not current.exists():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        path.mkdir()
    return missing


def _remove_dirs(directories: list[Path]) -> None:
    for path in directories:  # deepest first, as _make_parents listed them
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def _copy_mode(rel_path: str, target: Path, temp: Path) -> None:
    """Keep an existing file's permissions; scripts from templates stay executable."""
    if target.exists():
        os.chmod(temp, target.stat().st_mode & 0o777)
    elif rel_path.endswith(".sh"):
        os.chmod(temp, 0o755)


def _commit(staged: list[tuple[Path, Path]]) -> None:
    """Rename staged files into place; on failure put back the originals already replaced."""
    backups: list[tuple[Path, Path | None]] = []
    try:
        for temp, target in staged:
            backup = None
            if target.exists():
                backup = target.with_name(f".{target.name}.pyop-bak")
                os.replace(target, backup)
            backups.append((target, backup))
            os.replace(temp, target)
    except OSError:
        for target, backup in reversed(backups):
            if backup is not None:
                os.replace(backup, target)
            else:
                target.unlink(missing_ok=True)
        for temp, _ in staged:
            temp.unlink(missing_ok=True)
        raise
    for _, backup in backups:
        if backup is not None:
            backup.unlink()
