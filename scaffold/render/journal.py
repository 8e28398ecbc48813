"""Project writes that survive a kill at any moment: a redo journal beside the files, recovered by the next command.

Why: a command writes a dozen files at once (a model, a controller, main.py, kustomizations, PROJECT). Each rename
into place is atomic, the set is not: a `kill -9`, an OOM kill, a power cut or a Ctrl-C between two renames used to
leave PROJECT listing a kind whose files were missing, or main.py old beside a new controller.

One `write_all` call is one transaction, made while the project lock (`pyop_scaffold.render.lock`) is held:

1. Stage. In a new folder `<root>/.pyop-journal-<pid>-<random>/`, write each new content as `n<i>` and hard-link
   each file it will replace as `o<i>` (the old content kept without a copy; copied where the file system has no
   hard links); then fsync the `n<i>` (all written first, so one file-system commit covers them). Nothing in the
   project has changed.
2. Commit. Write the plan (each target, its `n<i>`/`o<i>`, the folders to make) as `plan.tmp`, fsync it and the
   journal folder, rename it to `plan.json`, fsync the journal folder and the project folder. That rename is the
   commit point: before it the command never happened, after it the command has happened.
3. Apply (roll forward). Entry by entry, in the caller's order (ChangeSet puts PROJECT last): make the missing
   folders, then `os.replace(n<i>, target)`. A target is replaced in one rename, never removed or moved aside
   first, so at every instant it is the old file or the new one. Then fsync every folder that got a new name.
4. Done. Remove `plan.json`, then the rest of the journal folder (only the `o<i>` links are left in it).

Recovery (`recover`), which every command runs as it takes the project lock, before it reads anything:
- a journal folder without a plan died before its commit point: the project was not touched, so the folder is
  removed (roll back);
- a journal with `plan.json` died after it: the entries whose `n<i>` is still in the journal were not applied
  yet, and are (roll forward); then the journal is removed. An entry whose target changed after the crash (the user
  edited, created or removed it by hand) is left as the user has it, and recovery says so;
- a journal with `undo.json` was undoing (below): the undo is finished.

A failure inside the command follows the same line. Before the commit point (an OSError, a MemoryError, Ctrl-C)
the journal folder is removed and the error raised: nothing changed. Ctrl-C after the commit point is held until
the apply is over, then raised (the project is complete; the command stops before its report). An OSError after
the commit point (a full disk making a folder, a folder made read-only meanwhile) undoes what was applied: the plan
is renamed to `undo.json` (so a kill now finishes the undo, not the apply), each replaced target gets its `o<i>`
back by one rename, each created file and folder is removed, and the error is raised.

Power loss: new contents are fsync'd before the commit point, the commit is made durable before the first target
changes, and the folders of the renamed targets are fsync'd before the plan is removed, so after a reboot the
journal still says what to finish whenever a target's rename may not have reached the disk.

Names are per process (pid and a random part), so two processes never share a temporary name, lock or no lock.
The folder `pyop init` makes when asked for one that does not exist is made before the journal (the journal lives
in it); a kill at that moment leaves that folder empty.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import signal
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from pyop_scaffold.errors import ProjectError
from pyop_scaffold.render.faults import step

JOURNAL_PREFIX = ".pyop-journal-"
_PLAN = "plan.json"
_PLAN_TEMP = "plan.tmp"
_UNDO = "undo.json"
_FORMAT = 1
_STAGED_NAME = re.compile(r"[no][0-9]+")
# Errors of os.link that mean "no hard links here", not "something is wrong": fall back to a copy.
_NO_LINKS = {errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EACCES}


@dataclass(frozen=True)
class Write:
    """One file of a transaction: its path inside the project ('/'-separated) and its new bytes."""

    path: str
    content: bytes
    mode: int | None = None  # permission bits to give the new file; None: what `open` gives under the umask


@dataclass(frozen=True)
class _Entry:
    path: str
    new: str  # name of the staged new content in the journal folder
    old: str | None  # name of the kept old file, None when the target did not exist
    dirs: tuple[str, ...]  # folders to make first, outermost first
    seen: str | None = None  # the old target's sha256 (None: there was none), to tell whether it changed since

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "new": self.new, "old": self.old, "dirs": list(self.dirs), "seen": self.seen}

    @staticmethod
    def from_json(item: Any) -> _Entry:
        if not isinstance(item, dict):
            raise ValueError("an entry is not a mapping")
        path, new, old, dirs = item.get("path"), item.get("new"), item.get("old"), item.get("dirs")
        if not isinstance(path, str) or not isinstance(new, str) or not _STAGED_NAME.fullmatch(new):
            raise ValueError(f"bad entry {item!r}")
        if old is not None and (not isinstance(old, str) or not _STAGED_NAME.fullmatch(old)):
            raise ValueError(f"bad entry {item!r}")
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
            raise ValueError(f"bad entry {item!r}")
        seen = item.get("seen")
        if seen is not None and not isinstance(seen, str):
            raise ValueError(f"bad entry {item!r}")
        for relative in (path, *dirs):
            check_project_path(relative)
        return _Entry(path, new, old, tuple(dirs), seen)


def check_project_path(path: str) -> str:
    """A path the journal may write: relative, inside the project, not the journal's own folder."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\0" in path
        or any(part in ("", ".", "..") for part in parts)
        or parts[0].startswith(JOURNAL_PREFIX)
    ):
        raise ProjectError(f"refusing to write {path!r}: not a path inside the project")
    return path


def write_all(root: Path, writes: Sequence[Write]) -> None:
    """Write every file of `writes` under `root`, or none, whatever happens to the process (see the module doc).

    The caller holds the project lock. An OSError is raised as it came (naming the target, not a journal file)
    after the project is put back as it was."""
    if not writes:
        return
    for write in writes:
        check_project_path(write.path)
    with _held_interrupts(abortable=True) as interrupts:
        _transaction(root, writes, interrupts)


def recover(root: Path) -> list[str]:
    """Finish or undo what interrupted commands left in `root` (see the module doc); one message per journal.

    Run with the project lock held: any journal found then belongs to a process that is gone."""
    try:
        names = sorted(name for name in os.listdir(root) if name.startswith(JOURNAL_PREFIX))
    except OSError:  # no folder (yet), or not one: there is nothing to recover
        return []
    messages: list[str] = []
    with _held_interrupts(abortable=False):
        for name in names:
            journal = root / name
            if journal.is_dir() and not journal.is_symlink():
                messages.append(_recover_one(root, journal))
    return messages


def _transaction(root: Path, writes: Sequence[Write], interrupts: _Interrupts) -> None:
    made_root = _make_root(root)
    journal = root / f"{JOURNAL_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
    step("make the journal folder")
    os.mkdir(journal, 0o700)
    entries: list[_Entry] = []
    committed = False
    try:
        folders: dict[Path, bool] = {root: True}
        for index, write in enumerate(writes):
            target = root / write.path
            seen = _identity(target)
            old = None if seen is None else f"o{index}"
            entry = _Entry(write.path, f"n{index}", old, _missing_folders(root, write.path, folders), seen)
            step(f"stage {write.path}")
            _write_file(journal / entry.new, write.content, write.mode, sync=False)
            if old is not None:
                step(f"keep the old {write.path}")
                _keep(target, journal / old)
            entries.append(entry)
            interrupts.check()
        plan = json.dumps({"format": _FORMAT, "entries": [e.to_json() for e in entries]}, indent=1).encode()
        step("write the plan")
        _write_file(journal / _PLAN_TEMP, plan, None, sync=False)
        # All written first, then all synced: the first fsync commits the file system's journal with every file
        # in it, so the others cost next to nothing (one fsync after each write forced one commit per file).
        for name in [*(entry.new for entry in entries), _PLAN_TEMP]:
            _fsync_file(journal / name)
        _fsync_folder(journal)
        interrupts.check()
        interrupts.abortable = False  # from here on Ctrl-C waits for the end
        step("commit")
        os.replace(journal / _PLAN_TEMP, journal / _PLAN)
        committed = True
        _fsync_folder(journal)
        _fsync_folder(root)
        _forward(root, journal, entries, recovering=False)
    except BaseException:
        if not committed:
            with contextlib.suppress(OSError):
                _discard(journal)
                _remove_empty(made_root)
            raise
        try:
            _undo(root, journal, entries)
        except OSError as undo_error:
            raise ProjectError(
                f"could not write the project's files, nor undo the part written ({undo_error}): the next pyop "
                f"command in {root} finishes the undo"
            ) from undo_error
        raise
    with contextlib.suppress(OSError):  # complete already: a plan left behind is closed by the next recovery
        _close(journal, _PLAN)


def _recover_one(root: Path, journal: Path) -> str:
    if (journal / _PLAN).is_file():
        entries = _load_plan(journal, _PLAN)
        try:
            kept = _forward(root, journal, entries, recovering=True)
        except OSError as error:
            try:
                _undo(root, journal, entries)
            except OSError as undo_error:
                raise _stuck(journal, undo_error) from undo_error
            return f"undid the writes of an interrupted pyop command, which could not be finished ({error})"
        _close(journal, _PLAN)
        message = f"finished the writes of an interrupted pyop command ({len(entries)} file(s))"
        if kept:
            message += f"; kept your own version of {', '.join(kept)} (changed after the interruption)"
        return message
    if (journal / _UNDO).is_file():
        entries = _load_plan(journal, _UNDO)
        try:
            _backward(root, journal, entries)
        except OSError as error:
            raise _stuck(journal, error) from error
        _close(journal, _UNDO)
        return "finished undoing the writes of an interrupted pyop command"
    try:
        _discard(journal)
    except OSError as error:
        raise _stuck(journal, error) from error
    return "removed the journal of an interrupted pyop command (the project itself needed no change)"


def _stuck(journal: Path, error: OSError) -> ProjectError:
    return ProjectError(
        f"cannot finish or undo the writes of an interrupted pyop command ({error}): they are in {journal}"
    )


def _load_plan(journal: Path, name: str) -> list[_Entry]:
    try:
        data = json.loads((journal / name).read_bytes())
        if not isinstance(data, dict) or data.get("format") != _FORMAT or not isinstance(data.get("entries"), list):
            raise ValueError("not a pyop journal of this version")
        return [_Entry.from_json(item) for item in data["entries"]]
    except (OSError, ValueError, ProjectError) as error:
        raise ProjectError(
            f"cannot read {journal / name}, left by an interrupted pyop command ({error}): move the folder away "
            "to go on without its changes"
        ) from error


def _forward(root: Path, journal: Path, entries: list[_Entry], *, recovering: bool) -> list[str]:
    """Rename each staged file into place (PROJECT, last in the list, last); returns the targets left alone."""
    touched: set[Path] = set()
    kept: list[str] = []
    for entry in entries:
        staged = journal / entry.new
        if not os.path.lexists(staged):
            continue  # renamed into place before the interruption
        target = root / entry.path
        if recovering and _changed_since(target, entry):
            kept.append(entry.path)
            continue
        for folder in entry.dirs:
            path = root / folder
            if not path.is_dir():
                step(f"make {folder}/")
                with contextlib.suppress(FileExistsError):
                    os.mkdir(path)
                touched.add(path.parent)
        step(f"rename {entry.path} into place")
        _rename(staged, target)
        touched.add(target.parent)
    for parent in sorted(touched):
        _fsync_folder(parent)
    return kept


def _undo(root: Path, journal: Path, entries: list[_Entry]) -> None:
    """Turn a committed journal into an undo (a kill from now on finishes the undo) and undo it."""
    step("turn the plan into an undo")
    os.replace(journal / _PLAN, journal / _UNDO)
    _fsync_folder(journal)
    _backward(root, journal, entries)
    _close(journal, _UNDO)


def _backward(root: Path, journal: Path, entries: list[_Entry]) -> None:
    """Put back the old file of each applied entry (newest first) and remove the files and folders made."""
    touched: set[Path] = set()
    for entry in reversed(entries):
        if os.path.lexists(journal / entry.new):
            continue  # never applied
        target = root / entry.path
        if entry.old is not None:
            kept = journal / entry.old
            if not os.path.lexists(kept):
                continue  # already put back
            step(f"put the old {entry.path} back")
            _rename(kept, target)
        elif os.path.lexists(target):
            step(f"remove the new {entry.path}")
            os.unlink(target)
        touched.add(target.parent)
    for entry in reversed(entries):
        for folder in reversed(entry.dirs):
            path = root / folder
            if path.is_dir() and not any(path.iterdir()):
                step(f"remove {folder}/")
                os.rmdir(path)
                touched.add(path.parent)
    for parent in sorted(touched):
        if parent.is_dir():
            _fsync_folder(parent)


def _changed_since(target: Path, entry: _Entry) -> bool:
    """Whether `target` changed after the interrupted command staged its writes (the user edited, made or removed
    it). By content, not inode or time: an edit in place keeps the inode (and the hard link in the journal sees
    it too), and a copied or restored project has new inodes and times but the same files."""
    return _identity(target) != entry.seen


def _identity(path: Path) -> str | None:
    """The sha256 of a file's bytes (a symbolic link's target text), None when nothing is there."""
    try:
        if path.is_symlink():
            return "symlink " + os.readlink(path)
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def _close(journal: Path, marker: str) -> None:
    """The transaction is over once its plan is gone; the rest of the folder is removed as well as it can be."""
    step("close the journal")
    os.unlink(journal / marker)
    with contextlib.suppress(OSError):
        _discard(journal)


def _discard(journal: Path) -> None:
    if not journal.is_dir():
        return
    for name in sorted(os.listdir(journal)):
        step(f"remove the journal's {name}")
        os.unlink(journal / name)
    step("remove the journal folder")
    os.rmdir(journal)


def _missing_folders(root: Path, path: str, known: dict[Path, bool]) -> tuple[str, ...]:
    """The folders above `path` that do not exist yet, outermost first (`known` caches existence)."""
    missing: list[str] = []
    parts = path.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        folder = root.joinpath(*parts[:depth])
        exists = known.get(folder)
        if exists is None:
            exists = known[folder] = folder.is_dir()
        if not exists:
            missing.append("/".join(parts[:depth]))
    return tuple(missing)


def _make_root(root: Path) -> list[Path]:
    """Make the project folder if it does not exist (`pyop init` into a new folder); the folders made, deepest
    first."""
    made: list[Path] = []
    current = root
    while not current.exists():
        made.append(current)
        current = current.parent
    for folder in reversed(made):
        step(f"make {folder}")
        os.mkdir(folder)
    return made


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:  # deepest first
        if folder.is_dir() and not any(folder.iterdir()):
            os.rmdir(folder)


def _write_file(path: Path, data: bytes, mode: int | None, *, sync: bool = True) -> None:
    with open(path, "xb") as stream:
        stream.write(data)
        stream.flush()
        if mode is not None:
            os.fchmod(stream.fileno(), mode)
        if sync:
            os.fsync(stream.fileno())


def _fsync_file(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _keep(target: Path, kept: Path) -> None:
    """The old file, under a second name in the journal: a hard link (no copy, and the target stays where it is)."""
    try:
        os.link(target, kept, follow_symlinks=False)
        return
    except OSError as error:
        if error.errno not in _NO_LINKS:
            raise
    shutil.copy2(target, kept, follow_symlinks=False)
    if not kept.is_symlink():
        _fsync_file(kept)


def _rename(source: Path, target: Path) -> None:
    try:
        os.replace(source, target)
    except OSError as error:
        if error.errno is None:
            raise
        raise OSError(error.errno, error.strerror, str(target)) from error  # name the target, not a journal file


def _fsync_folder(folder: Path) -> None:
    """Make the names in `folder` durable; skipped where folders cannot be opened or synced (not POSIX)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


class _Interrupts:
    """Ctrl-C seen while a transaction runs: raised at the next staging step before the commit point, after the
    apply when it comes later (a half-applied project is what Ctrl-C must never leave)."""

    def __init__(self, abortable: bool) -> None:
        self.pending = False
        self.abortable = abortable

    def check(self) -> None:
        if self.pending and self.abortable:
            self.pending = False
            raise KeyboardInterrupt

    def hold(self, signum: int, frame: FrameType | None) -> None:
        self.pending = True


@contextlib.contextmanager
def _held_interrupts(*, abortable: bool) -> Iterator[_Interrupts]:
    """Hold SIGINT for the block; a Ctrl-C held to the end is raised then (by the handler that was in place)."""
    interrupts = _Interrupts(abortable)
    if threading.current_thread() is not threading.main_thread():
        yield interrupts  # signals are only delivered to the main thread's Python code
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN or previous is None:
        yield interrupts
        return
    signal.signal(signal.SIGINT, interrupts.hold)
    try:
        yield interrupts
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupts.pending:
        if callable(previous):
            previous(signal.SIGINT, None)
        raise KeyboardInterrupt
