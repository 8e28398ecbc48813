"""A file-backed backend for development: an append-only log of JSON lines, fsynced per write, for one process.

Each write appends one line ``{"r": revision, "op": "PUT"|"DELETE", "k": storage_key, "ns": ..., "n": ..., "o": obj}``
and fsyncs before ``commit`` returns, so an acknowledged write survives a crash. A crash in the middle of an append
leaves at most one partial last line: ``load`` drops it (and truncates it away, so later appends start on a clean
line). A damaged line anywhere else is refused with its line number rather than skipped.

Compaction rewrites the log as its live objects only (a header line ``{"compacted": revision}`` and one PUT per
object) into a temporary file that is fsynced and renamed over the log, so a crash leaves either the old log or the
new one, never a mixture. It runs when the log holds more than twice as many lines as live objects (plus a margin),
and on ``compact()``, which also moves the revision past every one handed out (the API's compaction: older
resourceVersions become 410 Expired in the watch cache above).

One process at a time: an exclusive ``flock`` on ``<path>.lock``; a second opener gets ``StorageUnavailable``.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from pyop.apiserver.storage.backend import (
    BackendEvent,
    Snapshot,
    StorageError,
    StorageUnavailable,
    check_expected,
    object_with_revision,
)

Key = tuple[str, str, str]  # (storage_key, namespace, name)
COMPACT_MARGIN = 1024


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FileBackend:
    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.revision = 0
        self._live: dict[Key, dict[str, Any]] = {}
        self._lines = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.path.with_name(self.path.name + ".lock"), "a")  # noqa: SIM115 (held until close)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            raise StorageUnavailable(f"{self.path} is in use by another process (file storage serves one)") from None
        try:
            self._replay()
        except BaseException:
            self._lock.close()
            raise
        created = not self.path.exists()
        self._log: IO[bytes] = open(self.path, "ab")  # noqa: SIM115 (the log stays open for appends)
        if created and fsync:
            _fsync_dir(self.path.parent)  # the new file's name is durable before any write is acknowledged

    # --- start-up -----------------------------------------------------------------------------------

    def _replay(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb") as log:
            data = log.read()
        good_end = 0
        position = 0
        number = 0
        while position < len(data):
            newline = data.find(b"\n", position)
            if newline < 0:  # an append the crash cut short: never acknowledged, so dropped
                break
            number += 1
            line = data[position:newline]
            try:
                self._apply(json.loads(line))
            except (ValueError, KeyError, TypeError) as error:
                if data.find(b"\n", newline + 1) < 0 and not data[newline + 1 :].strip():
                    break  # the last line is damaged: the same unacknowledged append
                raise StorageUnavailable(f"{self.path}: line {number} is not a storage record: {error}") from None
            position = good_end = newline + 1
            self._lines += 1
        if good_end < len(data):
            with open(self.path, "r+b") as log:
                log.truncate(good_end)
                os.fsync(log.fileno())

    def _apply(self, record: dict[str, Any]) -> None:
        if "compacted" in record:
            self.revision = max(self.revision, int(record["compacted"]))
            return
        revision = int(record["r"])
        key = (str(record["k"]), str(record["ns"]), str(record["n"]))
        if record["op"] == "DELETE":
            self._live.pop(key, None)
        else:
            self._live[key] = object_with_revision(record["o"], revision)
        self.revision = max(self.revision, revision)

    def load(self) -> Snapshot:
        return Snapshot(self.revision, [(key[0], obj) for key, obj in self._live.items()])

    # --- writes -------------------------------------------------------------------------------------

    def commit(
        self,
        storage_key: str,
        event_type: str,
        namespace: str,
        name: str,
        obj: dict[str, Any] | None,
        expected_rv: int | None,
    ) -> int:
        key = (storage_key, namespace, name)
        current = self._live.get(key)
        check_expected(storage_key, event_type, namespace, name, current, expected_rv)
        revision = self.revision + 1
        record: dict[str, Any] = {"r": revision, "op": "DELETE" if event_type == "DELETED" else "PUT"}
        record.update(k=storage_key, ns=namespace, n=name)
        if event_type != "DELETED":
            record["o"] = obj
        self._append(json.dumps(record, separators=(",", ":")).encode() + b"\n")
        self.revision = revision
        if event_type == "DELETED":
            self._live.pop(key, None)
        else:
            assert obj is not None
            self._live[key] = object_with_revision(obj, revision)
        if self._lines > 2 * len(self._live) + COMPACT_MARGIN:
            self._rewrite(self.revision)
        return revision

    def _append(self, line: bytes) -> None:
        try:
            self._log.write(line)
            self._log.flush()
            if self.fsync:
                os.fsync(self._log.fileno())
        except OSError as error:
            raise StorageUnavailable(f"{self.path}: cannot append: {error}") from error
        self._lines += 1

    def compact(self) -> int:
        self.revision += 1
        self._rewrite(self.revision)
        return self.revision

    def _rewrite(self, compacted: int) -> None:
        """The live objects into ``<path>.tmp``, fsynced, renamed over the log (atomic on POSIX), directory fsynced."""
        temporary = self.path.with_name(self.path.name + ".tmp")
        with open(temporary, "wb") as out:
            out.write(json.dumps({"compacted": compacted}).encode() + b"\n")
            for (storage_key, namespace, name), obj in self._live.items():
                revision = int(obj["metadata"]["resourceVersion"])
                record = {"r": revision, "op": "PUT", "k": storage_key, "ns": namespace, "n": name, "o": obj}
                out.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")
            out.flush()
            os.fsync(out.fileno())
        self._log.close()
        os.replace(temporary, self.path)
        _fsync_dir(self.path.parent)
        self._log = open(self.path, "ab")  # noqa: SIM115
        self._lines = 1 + len(self._live)

    def watch_external(
        self, since: int, on_event: Callable[[BackendEvent], None], on_error: Callable[[StorageError], None]
    ) -> None:
        """One process owns the file: there are no other writers to report."""

    def close(self) -> None:
        self._log.close()
        self._lock.close()
