"""The project lock: one pyop command at a time works on a project, and it finds the project consistent.

Why: two commands at once used to interleave their reads and writes (lost PROJECT updates, a CRD generated from a
half-written project, tracebacks on each other's temporary files). Every command that reads or writes a project
holds this lock from before its first read to after its last write (`holding_project_lock`). The lock is
exclusive, for `make manifests --check` too: every pyop command may write, and a shared mode would only let a
reader in beside a recovery.

It is `flock` on the project folder itself: no lock file to leave behind or to commit, and the kernel releases it
when its holder dies, however it dies, so the lock of a killed process is taken over at once (there is no pid to
check for staleness). A second command waits up to PYOP_LOCK_TIMEOUT seconds (default 5), then refuses in one line
(exit code 2). Whoever takes the lock first runs `journal.recover`, so it sees each interrupted command either not
started or finished, never half-applied.

The lock is re-entrant within a thread (a command holding it calls `ChangeSet.apply`, which takes it too); two
threads, like two processes, wait for each other. Where there is no flock (Windows) or the file system refuses it
(some network mounts), pyop works unlocked.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from pyop_scaffold.errors import LockedError, UsageError
from pyop_scaffold.render.journal import recover

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

LOCK_TIMEOUT_ENV = "PYOP_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 5.0
_POLL_SECONDS = 0.02
_UNSUPPORTED = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS, errno.EINVAL}
_held = threading.local()

P = ParamSpec("P")
R = TypeVar("R")


def holding_project_lock(command: Callable[Concatenate[Path, P], R]) -> Callable[Concatenate[Path, P], R]:
    """Run `command(root, ...)` holding the lock of the project in `root` (every command that touches a project)."""

    @functools.wraps(command)
    def locked(root: Path, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with project_lock(root):
            return command(root, *args, **kwargs)

    return locked


@contextlib.contextmanager
def project_lock(root: Path) -> Iterator[None]:
    """Hold the project's lock for the block; on first taking it, recover what interrupted commands left."""
    root = Path(root).resolve()
    folder = _lock_folder(root)
    held: dict[Path, int] = _held.__dict__.setdefault("folders", {})
    if folder in held:
        held[folder] += 1
        try:
            yield
        finally:
            held[folder] -= 1
        return
    descriptor = _acquire(folder, lock_timeout())
    held[folder] = 1
    try:
        for message in recover(root):
            sys.stderr.write(f"pyop: {message}\n")
        yield
    finally:
        del held[folder]
        if descriptor is not None:
            os.close(descriptor)  # releases the flock


def lock_timeout() -> float:
    """Seconds a command waits for another one to finish (PYOP_LOCK_TIMEOUT, default 5)."""
    value = os.environ.get(LOCK_TIMEOUT_ENV)
    if value is None or value == "":
        return DEFAULT_LOCK_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        raise UsageError(f"invalid {LOCK_TIMEOUT_ENV} {value!r}: must be a number of seconds, 0 or more")
    return seconds


def _lock_folder(root: Path) -> Path:
    """The project folder, or for `pyop init` into a folder not made yet, the nearest folder above it."""
    folder = root
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


def _acquire(folder: Path, timeout: float) -> int | None:
    """An open descriptor of `folder` holding its flock; None where locks are not available."""
    if fcntl is None:
        return None
    try:
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None  # an unreadable folder: the command's own first read says what is wrong
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return descriptor
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(descriptor)
                raise LockedError(
                    f"another pyop command is working on the project in {folder} (waited {timeout:g} s): run this "
                    "one again when it has finished"
                ) from None
            time.sleep(_POLL_SECONDS)
        except OSError as error:
            if error.errno in _UNSUPPORTED:
                return descriptor  # the file system has no locks: go on without
            os.close(descriptor)
            raise
