"""A planned set of file writes applied all or nothing, with pyop's rules about the user's files.

Commands first compute every file they would create or change (in memory), then `ChangeSet.apply` checks for
conflicts before touching the disk and hands the files to the journal (`pyop_scaffold.render.journal`), which
makes the set of writes atomic across a kill, a power cut or Ctrl-C: a command either completes or leaves the
project as it was. This is the only way pyop writes into a project (the caches it keeps beside bytecode in
`__pycache__` are not the project's files).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from pyop_scaffold.errors import ConflictError
from pyop_scaffold.project.config import PROJECT_FILE
from pyop_scaffold.render.journal import Write, write_all
from pyop_scaffold.render.lock import project_lock


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
        """Write every planned file, or nothing: conflicts are reported before the disk is touched, and the writes
        go through the journal (PROJECT last), holding the project lock."""
        if self.conflicts:
            names = ", ".join(sorted(self.conflicts))
            raise ConflictError(f"refusing to overwrite existing file(s) {names}: pass --force to overwrite")
        writes = sorted(self.writes(), key=_commit_order)
        with project_lock(self.root):  # commands hold it already (from before their first read); re-entrant
            write_all(self.root, [Write(p.path, p.content, self._mode(p.path)) for p in writes])
        return sorted(self.planned.values(), key=lambda p: p.path)

    def _mode(self, path: str) -> int | None:
        """Keep an existing file's permissions; scripts from templates are executable."""
        target = self.root / path
        if target.exists():
            return target.stat().st_mode & 0o777
        return 0o755 if path.endswith(".sh") else None


def _commit_order(planned: PlannedFile) -> tuple[bool, str]:
    """PROJECT last: it records what was scaffolded, so it must never list what is not written yet."""
    return (planned.path == PROJECT_FILE, planned.path)
