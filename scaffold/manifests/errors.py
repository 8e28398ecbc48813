"""Errors of the manifest generator: each names the file, the line and what is wrong there."""

from __future__ import annotations

from dataclasses import dataclass

from pyop_scaffold.errors import PyopError


@dataclass(frozen=True)
class SourceLocation:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class MarkerError(PyopError):
    """A marker that cannot be parsed or applied; carries where it was written."""

    def __init__(self, message: str, location: SourceLocation | None = None) -> None:
        self.location = location
        super().__init__(f"{location}: {message}" if location else message)


class ManifestError(PyopError):
    """One or more problems found while generating manifests; nothing was written. One line per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))
