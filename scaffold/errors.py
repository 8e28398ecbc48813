"""Errors the CLI turns into one line on stderr and exit code 2, with nothing written."""

from __future__ import annotations


class PyopError(Exception):
    """A problem with the user's input or project that the user can fix; the message is one line."""

    exit_code: int = 2


class UsageError(PyopError):
    """A flag or argument has a value pyop does not accept."""


class ProjectError(PyopError):
    """The folder is not in a state the command can work with (no project, already scaffolded, ...)."""


class ConflictError(PyopError):
    """A file pyop would write already exists and may hold the user's work; `--force` overwrites."""


class LockedError(ProjectError):
    """Another pyop command is working on the project (it holds the project lock) and did not finish in time."""
