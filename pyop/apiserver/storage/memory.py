"""The in-process backend: a revision counter and the live objects, gone with the process (the test server's).

It keeps what ``load`` and the conflict checks need (each key's object and revision) in one dict, so a write costs
one counter increment and one dict operation on top of the watch cache's own work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyop.apiserver.storage.backend import BackendEvent, Snapshot, StorageConflict, StorageError, object_with_revision

Key = tuple[str, str, str]  # (storage_key, namespace, name)


class MemoryBackend:
    """Revisions from a counter; a second ``Store`` over the same instance starts from the first one's objects."""

    def __init__(self) -> None:
        self.revision = 0
        self._live: dict[Key, tuple[int, dict[str, Any]]] = {}  # key -> (revision, object)

    def load(self) -> Snapshot:
        return Snapshot(
            self.revision, [(key[0], object_with_revision(obj, rv)) for key, (rv, obj) in self._live.items()]
        )

    def commit(
        self,
        storage_key: str,
        event_type: str,
        namespace: str,
        name: str,
        obj: dict[str, Any] | None,
        expected_rv: int | None,
    ) -> int:
        """``check_expected``'s compare, inlined on revisions: this is every test-server write's path."""
        key = (storage_key, namespace, name)
        live = self._live
        if event_type == "ADDED":
            if key in live:
                raise StorageConflict(storage_key, namespace, name, exists=True)
        elif expected_rv is not None:
            current = live.get(key)
            if current is None or current[0] != expected_rv:
                raise StorageConflict(storage_key, namespace, name, exists=current is not None)
        self.revision = revision = self.revision + 1
        if obj is None:
            live.pop(key, None)
        else:
            live[key] = (revision, obj)
        return revision

    def compact(self) -> int:
        self.revision += 1
        return self.revision

    def watch_external(
        self, since: int, on_event: Callable[[BackendEvent], None], on_error: Callable[[StorageError], None]
    ) -> None:
        """No other process writes here."""

    def close(self) -> None:
        """Nothing to release."""
