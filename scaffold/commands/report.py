"""The outcome of a command: files created, updated and skipped, and what to do next."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyop_scaffold.render.changeset import Action, PlannedFile


@dataclass
class Report:
    files: list[PlannedFile] = field(default_factory=list)
    next_step: str = ""
    notes: list[str] = field(default_factory=list)
    # Folders of generated files (`<package>/k8s`) printed as one line per action rather than file by file.
    collapsed: list[str] = field(default_factory=list)

    def paths(self, *actions: Action) -> list[str]:
        return [f.path for f in self.files if f.action in actions]
