"""The durable backend beneath the watch cache (k8s.io/apiserver's storage.Interface, cut to what the cache needs).

The registry stays synchronous over the in-memory ``Store`` (it is the watch cache: history, list snapshots, watch
fan-out, indexes). A backend is what makes a write durable and what numbers it: ``commit`` returns the revision that
becomes the object's resourceVersion, so with etcd the resourceVersions *are* etcd revisions and two API server
replicas over one etcd hand out one sequence. Backends are synchronous on purpose: a write is acknowledged only after
the backend has it, and the registry's checks-then-commit stays one uninterrupted step on the event loop. The price
with etcd is one round trip per write on the event loop (measured by bench/bench_apiserver.py).

Refined from the design note's sketch: ``load`` returns a ``Snapshot``; ``compact`` is part of the protocol (the
test server's fault injection and kube-apiserver's compaction need it); ``watch_external`` takes the revision to
start after and an ``on_error`` (a watch that fell behind a compaction must make the cache reload); failures are
``StorageError`` subclasses, which the Store turns into Statuses (the backends know nothing of HTTP).

The contract every backend meets (tests/apiserver_storage runs one suite over all of them):

- Revisions increase strictly across all keys; a write's revision is greater than every revision ``load`` or an
  earlier ``commit`` returned. They need not be consecutive (etcd's are shared with every other key in the cluster).
- ``commit(..., "ADDED", ..., expected_rv=None)`` creates and fails with ``StorageConflict`` when the key exists;
  ``MODIFIED``/``DELETED`` with ``expected_rv`` fail with ``StorageConflict`` unless the key's current revision is
  ``expected_rv`` (another replica wrote first); ``expected_rv=None`` there writes unconditionally.
- ``load`` returns every live object with ``metadata.resourceVersion`` set to the revision of its last write.
- ``compact`` forgets all history up to now and returns a revision newer than any handed out: whatever read or watch
  asks for an older revision gets ``StorageExpired`` (the API's 410 Expired).
- ``watch_external`` reports, from a background thread, the writes of *other* processes with revision > ``since``,
  in revision order (etcd watch; in-process backends have no other writers and never call back). The backend's own
  writes are reported too (the receiver drops every event at or below the revision it already holds), and so is
  its compaction marker, as a PROGRESS event: a cache waiting to have seen revision R can tell when it has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


class StorageError(Exception):
    """A backend failure the API turns into a Status: see the subclasses."""


class StorageConflict(StorageError):
    """The key's revision is not the one the write expected (409: Conflict, or AlreadyExists for a create)."""

    def __init__(self, storage_key: str, namespace: str, name: str, *, exists: bool, revision: int = 0) -> None:
        super().__init__(f"{storage_key} {namespace}/{name}: {'modified' if exists else 'not found'} in storage")
        self.storage_key = storage_key
        self.namespace = namespace
        self.name = name
        self.exists = exists
        # The revision of the write that won (0: unknown or none): a cache that has not seen it yet can wait for it,
        # so that the client's retry reads the winner's object.
        self.revision = revision


class StorageExpired(StorageError):
    """A revision older than the backend's compaction was asked for (410: Expired)."""

    def __init__(self, revision: int, compacted: int | None = None) -> None:
        known = f" (compacted revision: {compacted})" if compacted is not None else ""
        super().__init__(f"required revision {revision} has been compacted{known}")
        self.revision = revision
        self.compacted = compacted


class StorageUnavailable(StorageError):
    """The backend cannot be reached or answered nonsense (503/500: the write did not happen, or may have)."""


@dataclass(slots=True)
class Snapshot:
    """The backend's state at one revision, for the cache to start from."""

    revision: int
    items: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (storage_key, object)


@dataclass(slots=True)
class BackendEvent:
    """A write seen in the backend; ``obj`` is None for a deletion (the cache holds what was deleted)."""

    revision: int
    type: str  # "PUT", "DELETE", or "PROGRESS" (a write to a key that is no object's: the revision moved on)
    storage_key: str
    namespace: str
    name: str
    obj: dict[str, Any] | None


class Backend(Protocol):
    """What the watch cache needs from durable storage (see the module docstring for the contract)."""

    def load(self) -> Snapshot: ...

    def commit(
        self,
        storage_key: str,
        event_type: str,
        namespace: str,
        name: str,
        obj: dict[str, Any] | None,
        expected_rv: int | None,
    ) -> int: ...

    def compact(self) -> int: ...

    def watch_external(
        self, since: int, on_event: Callable[[BackendEvent], None], on_error: Callable[[StorageError], None]
    ) -> None: ...

    def close(self) -> None: ...


def check_expected(
    storage_key: str,
    event_type: str,
    namespace: str,
    name: str,
    current: dict[str, Any] | None,
    expected_rv: int | None,
) -> None:
    """The compare of an in-process backend's write (etcd's transaction does the same): a create needs the key
    absent; an update or delete that names ``expected_rv`` needs the stored object to be at that revision."""
    if event_type == "ADDED":
        if current is not None:
            raise StorageConflict(storage_key, namespace, name, exists=True)
    elif expected_rv is not None and (current is None or current["metadata"]["resourceVersion"] != str(expected_rv)):
        raise StorageConflict(storage_key, namespace, name, exists=current is not None)


def object_with_revision(obj: dict[str, Any], revision: int) -> dict[str, Any]:
    """``obj`` as the cache stores it: ``metadata.resourceVersion`` is the revision of its last write (stored bytes
    carry whatever the writer had, as kube-apiserver's do; the revision is the truth)."""
    obj["metadata"]["resourceVersion"] = str(revision)
    return obj
