"""Errors of the manifest generator: each names the file, the line and what is wrong there."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path

from pyop_scaffold.errors import PyopError

# Appended where pyop reports an exception it did not expect: the one line says where and what, the traceback
# (the CLI's --debug, or PYOP_DEBUG=1) says how it got there.
DEBUG_HINT = "(pyop --debug or PYOP_DEBUG=1 shows the traceback)"


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
    """One or more problems found while generating manifests; nothing was written. One line per problem.

    `causes` keeps the exceptions of the user's code behind the problems, for the CLI's `--debug` tracebacks.
    """

    def __init__(self, problems: list[str], causes: list[BaseException] | None = None) -> None:
        self.problems = problems
        self.causes = causes or []
        super().__init__("\n".join(problems))


def describe_exception(exc: BaseException) -> str:
    """`Type: first line of the message`, without the location a SyntaxError's text repeats."""
    if isinstance(exc, SyntaxError):
        text = exc.msg or ""
    else:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def location_in(exc: BaseException, root: Path) -> SourceLocation | None:
    """Where in the project under `root` an exception was raised: a syntax error's own file and line, else the
    innermost frame of the traceback that is in a project file. None when no project file is involved.

    The innermost project frame is the user's line that led to the error even when a library raised it (the
    `Field(...)` call pydantic refused, the `import` of a missing module).
    """
    if isinstance(exc, SyntaxError) and exc.filename:
        found = _relative(Path(exc.filename), root)
        if found is not None:
            return SourceLocation(found, exc.lineno or 1)
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        found = _relative(Path(frame.filename), root)
        if found is not None:
            return SourceLocation(found, frame.lineno or 1)
    return None


def _relative(path: Path, root: Path) -> str | None:
    if str(path).startswith("<"):  # <string>, <frozen importlib._bootstrap>: no file
        return None
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (OSError, ValueError):
        return None
