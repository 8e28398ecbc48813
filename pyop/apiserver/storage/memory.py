"""The in-process backend: a revision counter and the live objects, gone with the process (the test server's).

It keeps what ``load`` and the conflict checks need (each key's object and revision) in one dict, so a write costs
one counter increment and one dict operation on top of the watch cache's own work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyop.apiserver.storage.backend import BackendEvent, Snapshot, StorageError, check_expected

Key = tuple[str, str, str]  # (storage_key, namespace, name)


class MemoryBackend:
    """Revisions from a counter; a second ``Store`` over the same instance starts from the first one's objects."""

    def __init__(self) -> None:
        self.revision = 0
        self._live: dict[Key, dict[str, Any]] = {}

    def load(self) -> Snapshot:
        return Snapshot(self.revision, [(key[0], obj) for key, obj in self._live.items()])

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
        self.revision += 1
        if event_type == "DELETED":
            self._live.pop(key, None)
        else:
            assert obj is not None
            obj["metadata"]["resourceVersion"] = str(self.revision)
            self._live[key] = obj
        return self.revision

    def compact(self) -> int:
        self.revision += 1
        return self.revision

    def watch_external(
        self, since: int, on_event: Callable[[BackendEvent], None], on_error: Callable[[StorageError], None]
    ) -> None:
        """No other process writes here."""

    def close(self) -> None:
        """Nothing to release."""
