"""Run pyop commands in child processes that may be killed, and compare project folders byte for byte.

A child is forked from a forkserver that has pyop's CLI and commands imported already, so one run costs a fork and
the command, not an interpreter start: the crash tests run a command once per file-system step. The child is a
separate process all the same: `PYOP_CRASH_AT` SIGKILLs it, and its lock dies with it.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import multiprocessing.context
import os
import shutil
import signal
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_PRELOAD = [
    "pyop_scaffold.cli.app",
    "pyop_scaffold.commands.init",
    "pyop_scaffold.commands.create_api",
    "pyop_scaffold.commands.create_webhook",
    "pyop_scaffold.commands.edit",
    "pyop_scaffold.commands.make_manifests",
    "pyop_scaffold.render.journal",
    "tests.scaffolding.crash_harness",
]
_context: multiprocessing.context.ForkServerContext | None = None
KILLED = -signal.SIGKILL


def context() -> multiprocessing.context.ForkServerContext:
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(_PRELOAD)
    return _context


@dataclass
class Run:
    exit_code: int  # negative: killed by that signal
    stderr: str

    @property
    def killed(self) -> bool:
        return self.exit_code == KILLED


def start(args: Sequence[str], cwd: Path, env: dict[str, str] | None = None, *, fail_rename: str = "") -> Child:
    """Start `pyop <args>` in `cwd` in a child process; `fail_rename` makes renaming onto that target fail (EIO)."""
    log = cwd.parent / f".{cwd.name}-stderr-{os.urandom(4).hex()}"
    process = context().Process(target=_child, args=(list(args), str(cwd), dict(env or {}), str(log), fail_rename))
    process.start()
    return Child(process, log)


def run(args: Sequence[str], cwd: Path, env: dict[str, str] | None = None, *, fail_rename: str = "") -> Run:
    return start(args, cwd, env, fail_rename=fail_rename).wait()


@dataclass
class Child:
    process: multiprocessing.process.BaseProcess
    log: Path

    def wait(self, timeout: float = 120) -> Run:
        self.process.join(timeout)
        if self.process.exitcode is None:
            self.process.kill()
            self.process.join()
            raise AssertionError(f"pyop did not finish in {timeout} s: {self.log.read_text(errors='replace')}")
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        self.log.unlink(missing_ok=True)
        return Run(self.process.exitcode, text)


def _child(args: list[str], cwd: str, env: dict[str, str], log: str, fail_rename: str) -> None:
    code = 1
    try:
        descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(descriptor, 2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the child ends with os._exit
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        os.environ.update(env)
        os.chdir(cwd)
        from pyop_scaffold.render import faults

        faults.reset()
        if fail_rename:
            _fail_renames_onto(Path(cwd) / fail_rename)
        from pyop_scaffold.cli.app import main

        sys.argv = ["pyop", *args]
        try:
            main()
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except BaseException as error:  # noqa: BLE001 - report whatever escaped, as a traceback would
        import traceback

        traceback.print_exception(error)
        code = 3
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _fail_renames_onto(target: Path) -> None:
    """A disk that fails one rename into the project (EIO), for the undo path."""
    import errno

    real = os.replace

    def replace(source: str | os.PathLike[str], destination: str | os.PathLike[str]) -> None:
        if Path(destination) == target and ".pyop-journal-" in str(source):
            raise OSError(errno.EIO, "Input/output error", str(destination))
        real(source, destination)

    os.replace = replace  # type: ignore[assignment]


def snapshot(root: Path) -> dict[str, str]:
    """{relative path: sha256 and permission bits} of every file and folder under `root`, hidden ones included;
    Python's bytecode caches are left out (importing the project writes them)."""
    result: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        relative = path.relative_to(root).as_posix()
        info = path.lstat()
        if stat.S_ISDIR(info.st_mode):
            result[relative] = "<dir>"
        elif stat.S_ISLNK(info.st_mode):
            result[relative] = f"<link {os.readlink(path)}>"
        else:
            result[relative] = f"{hashlib.sha256(path.read_bytes()).hexdigest()} {info.st_mode & 0o777:o}"
    return result


def describe_difference(state: dict[str, str], **known: dict[str, str]) -> str:
    """Which paths differ from each known state (for assertion messages)."""
    lines = []
    for name, other in known.items():
        differ = sorted(p for p in set(state) | set(other) if state.get(p) != other.get(p))
        lines.append(f"vs {name}: {differ[:12]}{' ...' if len(differ) > 12 else ''}")
    return "; ".join(lines)


def copy_project(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    return target
