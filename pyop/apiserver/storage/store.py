"""The watch cache: every object in memory, the recent history, list snapshots and watch fan-out, over a backend.

Objects are stored as plain dicts and never mutated after a commit: readers (lists, watch
events, list snapshots) share references safely, and a write costs O(1) dict operations plus
fan-out to the open watches of that resource.

Durability and resourceVersions come from the ``Backend`` beneath (storage/backend.py): ``commit`` hands each write
to it first and takes the revision it returns as the object's resourceVersion, so over etcd the resourceVersions
are etcd's revisions; start-up loads the backend's objects. Without a backend (``backend=None``, the test server's)
the cache itself is the memory storage: a revision counter, and no cost per write beyond the cache's own work
(``MemoryBackend`` is the same storage behind the protocol, for servers that name ``--storage-backend=memory``).

The registry above stays synchronous (checks and commit are one uninterrupted step on the event loop, so no other
request can slip between them), so a backend's write is a blocking call: over etcd, one round trip per write with
the event loop waiting (bench/bench_apiserver.py measures it). Reads never leave memory.

Other replicas' writes (``follow``): the backend's watch thread queues them in an inbox, and ``apply_external``
applies them on the Store's own thread in revision order, skipping what the cache already holds. A local write
whose revision is not the next one has other writers' events before it: ``commit`` first waits for the watch to
deliver up to its own revision (the watch is bound to, as the write is under the watched prefix) and applies them,
so history and watch streams stay in revision order. When that does not happen in time, or the watch fell behind a
compaction, the cache reloads from the backend (``resync``): changed objects become events and older history is
gone (a watch from before it gets 410 Expired and relists).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from pyop.api.status import STALE_OBJECT, ApiError, already_exists, bad_request, conflict, expired, not_found
from pyop.apiserver.storage.backend import Backend, BackendEvent, StorageConflict, StorageError

ObjectKey = tuple[str, str, str]  # (storage key such as "deployments.apps", namespace, name)

MAX_LIST_SNAPSHOTS = 256
# How long a write waits for the backend's watch to deliver the other writers' events before its own revision,
# and a conflict for the winning write (so the client's retry reads it), before the cache reloads instead.
CATCH_UP_TIMEOUT = 5.0
CONFLICT_WAIT = 1.0


@dataclass(slots=True)
class StoredEvent:
    """One committed change; ``prev`` lets selector watches turn MODIFIED into ADDED/DELETED."""

    resource_version: int
    type: str
    storage_key: str
    obj: dict[str, Any]
    prev: dict[str, Any] | None
    # Wire lines by (event type, apiVersion), encoded once for all watchers; None until the first.
    encoded: dict[tuple[str, str], bytes] | None = None


class EventSink(Protocol):
    def deliver(self, event: StoredEvent) -> None: ...


@dataclass(slots=True)
class ListSnapshot:
    """The matching objects of a paginated list at the RV of its first page."""

    resource_version: int
    items: list[dict[str, Any]]


def owner_uids(obj: dict[str, Any]) -> list[str]:
    return [ref["uid"] for ref in obj.get("metadata", {}).get("ownerReferences") or [] if ref.get("uid")]


def _same_identity(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether the uid and owner indexes would not change (most writes: spec or status only)."""
    old_meta, new_meta = before["metadata"], after["metadata"]
    return old_meta.get("uid") == new_meta.get("uid") and old_meta.get("ownerReferences") == new_meta.get(
        "ownerReferences"
    )


def _storage_error(error: StorageError, event_type: str = "") -> ApiError:
    """The Status kube-apiserver answers a storage failure with: another writer's create is AlreadyExists, its
    deletion NotFound, its update Conflict; anything else is an InternalError naming the storage's message."""
    if isinstance(error, StorageConflict):
        plural, _, group = error.storage_key.partition(".")
        if event_type == "ADDED":
            return already_exists(plural, group, error.name)
        if not error.exists:
            return not_found(plural, group, error.name)
        return conflict(plural, group, error.name, STALE_OBJECT)
    return ApiError(500, f"storage: {error}", reason="InternalError")


class Store:
    def __init__(self, history_limit: int, backend: Backend | None = None) -> None:
        self.resource_version = 0
        self.history_limit = history_limit
        self.history: deque[StoredEvent] = deque()
        # Every event with resourceVersion > compacted_rv is still in ``history``.
        self.compacted_rv = 0
        self._objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        self._sinks: dict[str, set[EventSink]] = {}
        self._by_uid: dict[str, ObjectKey] = {}
        self._dependents: dict[str, set[ObjectKey]] = {}
        self._snapshots: OrderedDict[str, ListSnapshot] = OrderedDict()
        self._namespace_counts: dict[str, int] = {}
        self.backend = backend
        # Other writers' events from the backend's watch thread, in revision order, until applied here.
        self._inbox: deque[BackendEvent] = deque()
        self._arrived = threading.Condition()
        self._schedule: Callable[[Callable[[], None]], object] | None = None
        self._wakeup_pending = False
        self._watch_error: StorageError | None = None
        if backend is not None:
            snapshot = backend.load()
            for storage_key, obj in snapshot.items:
                self._insert(storage_key, obj)
            self.resource_version = self.compacted_rv = snapshot.revision

    # --- reads --------------------------------------------------------------------------------------

    def get(self, storage_key: str, namespace: str, name: str) -> dict[str, Any] | None:
        bucket = self._objects.get(storage_key)
        return None if bucket is None else bucket.get((namespace, name))

    def objects(self, storage_key: str, namespace: str | None = None) -> Iterator[dict[str, Any]]:
        """The cached objects of a resource (in one namespace); every write asks for its namespace's quotas and
        most resources have none stored, so an empty resource answers without a generator."""
        bucket = self._objects.get(storage_key)
        if not bucket:
            return iter(())
        if namespace is None:
            return iter(bucket.values())
        return (obj for (obj_namespace, _), obj in bucket.items() if obj_namespace == namespace)

    def holds(self, storage_key: str, namespace: str) -> bool:
        """Whether any object of the resource is cached in ``namespace`` (``next(objects(...))`` without the
        generator while the resource has nothing stored: every write asks it of its namespace's ResourceQuotas)."""
        bucket = self._objects.get(storage_key)
        if not bucket:
            return False
        return any(obj_namespace == namespace for obj_namespace, _ in bucket)

    def count_in_namespace(self, namespace: str) -> int:
        return self._namespace_counts.get(namespace, 0)

    def storage_keys(self) -> list[str]:
        return list(self._objects)

    def exists_uid(self, uid: str) -> bool:
        return uid in self._by_uid

    def key_of_uid(self, uid: str) -> ObjectKey | None:
        return self._by_uid.get(uid)

    def dependents_of(self, uid: str) -> list[ObjectKey]:
        return list(self._dependents.get(uid, ()))

    # --- writes -------------------------------------------------------------------------------------

    def commit(self, storage_key: str, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None) -> int:
        """Write ``obj`` (or remove it, for DELETED) to the backend, then cache it under the backend's revision and
        notify watches. ``prev`` is the cached object it replaces: the backend writes only if it is still current
        there (409 Conflict otherwise: another replica wrote first)."""
        if self.backend is None:
            rv = self.resource_version + 1
        else:
            rv = self._write_through(self.backend, storage_key, event_type, obj, prev)
            if rv > self.resource_version + 1 and self._schedule is not None and not self._catch_up(rv):
                obj["metadata"]["resourceVersion"] = str(rv)  # the caller answers with it; the reload cached a copy
                return rv
        self._apply(storage_key, event_type, obj, prev, rv)
        return rv

    def _write_through(
        self, backend: Backend, storage_key: str, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None
    ) -> int:
        """The backend's write and its revision; its refusal as the Status kube-apiserver would answer."""
        metadata = obj["metadata"]
        expected = prev["metadata"].get("resourceVersion") if prev is not None else None
        try:
            return backend.commit(
                storage_key,
                event_type,
                metadata.get("namespace", ""),
                metadata["name"],
                None if event_type == "DELETED" else obj,
                int(expected) if expected else None,
            )
        except StorageConflict as error:
            if error.revision > self.resource_version and self._schedule is not None:
                self.sync(error.revision, CONFLICT_WAIT)  # the client's retry reads the winner's object
            raise _storage_error(error, event_type) from None
        except StorageError as error:
            raise _storage_error(error) from None

    def _apply(
        self, storage_key: str, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None, rv: int
    ) -> None:
        """Cache a committed write at revision ``rv``: indexes, history, watch fan-out."""
        self.resource_version = rv
        metadata = obj["metadata"]
        metadata["resourceVersion"] = str(rv)
        key = (metadata.get("namespace", ""), metadata["name"])
        bucket = self._objects.get(storage_key)
        if bucket is None:
            bucket = self._objects[storage_key] = {}
        if event_type == "DELETED":
            if prev is not None:
                self._unindex(prev, (storage_key, key[0], key[1]))
            if bucket.pop(key, None) is not None:
                self._namespace_counts[key[0]] -= 1
        else:
            if key not in bucket:
                self._namespace_counts[key[0]] = self._namespace_counts.get(key[0], 0) + 1
            bucket[key] = obj
            if prev is None or not _same_identity(prev, obj):  # most writes keep uid and owners: no index key
                object_key = (storage_key, key[0], key[1])
                if prev is not None:
                    self._unindex(prev, object_key)
                self._index(obj, object_key)
        event = StoredEvent(rv, event_type, storage_key, obj, prev)
        if len(self.history) >= self.history_limit:
            self.compacted_rv = self.history.popleft().resource_version
        self.history.append(event)
        sinks = self._sinks.get(storage_key)
        if sinks:
            for sink in list(sinks):
                sink.deliver(event)

    def _insert(self, storage_key: str, obj: dict[str, Any]) -> None:
        """An object loaded from the backend: cached and indexed, no event (nobody watches before start-up)."""
        metadata = obj["metadata"]
        key = (metadata.get("namespace", ""), metadata["name"])
        bucket = self._objects.setdefault(storage_key, {})
        if key not in bucket:
            self._namespace_counts[key[0]] = self._namespace_counts.get(key[0], 0) + 1
        bucket[key] = obj
        self._index(obj, (storage_key, key[0], key[1]))

    # --- other replicas' writes ---------------------------------------------------------------------

    def follow(self, schedule: Callable[[Callable[[], None]], object]) -> None:
        """Apply other replicas' writes as the backend sees them. ``schedule`` runs a callable on the thread that
        owns this Store (``loop.call_soon_threadsafe`` in a server); in-process backends never call it."""
        self._schedule = schedule
        if self.backend is not None:
            self.backend.watch_external(self.resource_version, self._arrive, self._watch_failed)

    def _arrive(self, event: BackendEvent) -> None:  # the backend's watch thread
        with self._arrived:
            self._inbox.append(event)
            self._arrived.notify_all()
            wake = not self._wakeup_pending
            self._wakeup_pending = True
        if wake:
            self._wake()

    def _watch_failed(self, error: StorageError) -> None:  # the backend's watch thread
        with self._arrived:
            self._watch_error = error
            self._arrived.notify_all()
        self._wake()

    def _wake(self) -> None:
        schedule = self._schedule
        if schedule is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop: the server is gone, so is the need to apply
                schedule(self.apply_external)

    def apply_external(self, until: int | None = None) -> None:
        """Apply the queued events of other writers (those below ``until`` only, when given), in revision order."""
        with self._arrived:
            self._wakeup_pending = False
        while True:
            with self._arrived:
                if not self._inbox or (until is not None and self._inbox[0].revision >= until):
                    break
                event = self._inbox.popleft()
            if event.revision > self.resource_version:
                self._apply_event(event)
        if self._watch_error is not None and until is None:
            self.resync(restart_watch=True)

    def _apply_event(self, event: BackendEvent) -> None:
        prev = self.get(event.storage_key, event.namespace, event.name)
        if event.type == "PUT" and event.obj is not None:
            self._apply(event.storage_key, "ADDED" if prev is None else "MODIFIED", event.obj, prev, event.revision)
        elif event.type == "DELETE" and prev is not None:
            gone = {**prev, "metadata": {**prev["metadata"]}}
            self._apply(event.storage_key, "DELETED", gone, prev, event.revision)
        else:  # PROGRESS, or the deletion of something never cached: the revision moved on
            self.resource_version = event.revision

    def _wait_for(self, revision: int, timeout: float) -> bool:
        """Block until the backend's watch has queued an event at or past ``revision``."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while not (self._inbox and self._inbox[-1].revision >= revision):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._watch_error is not None:
                    return False
                self._arrived.wait(remaining)
        return True

    def _catch_up(self, revision: int) -> bool:
        """Before caching this process's write at ``revision``: apply the other writers' earlier events (False: they
        did not come in time, and the cache was reloaded from the backend instead, that write included)."""
        if self._wait_for(revision, CATCH_UP_TIMEOUT):
            self.apply_external(until=revision)
            return True
        self.resync(restart_watch=self._watch_error is not None)
        return False

    def sync(self, revision: int, timeout: float = CATCH_UP_TIMEOUT) -> bool:
        """Wait (blocking) until the cache holds every write up to ``revision``; whether it does."""
        if self.resource_version < revision:
            self._wait_for(revision, timeout)
            self.apply_external()  # and reloads, when the watch failed
        return self.resource_version >= revision

    def resync(self, *, restart_watch: bool = False) -> None:
        """Reload from the backend: objects that differ become events at the snapshot's revision, history before it
        is gone (a watch from an older resourceVersion gets 410 Expired and relists)."""
        if self.backend is None:
            return  # the cache is the storage: nothing to reload from
        snapshot = self.backend.load()
        fresh: dict[ObjectKey, dict[str, Any]] = {}
        for storage_key, obj in snapshot.items:
            fresh[(storage_key, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])] = obj
        self.history.clear()
        self._snapshots.clear()
        for storage_key, bucket in list(self._objects.items()):
            for (namespace, name), cached in list(bucket.items()):
                if (storage_key, namespace, name) not in fresh:
                    gone = {**cached, "metadata": {**cached["metadata"]}}
                    self._apply(storage_key, "DELETED", gone, cached, snapshot.revision)
        for (storage_key, namespace, name), obj in fresh.items():
            current = self.get(storage_key, namespace, name)
            if current is None or current["metadata"].get("resourceVersion") != obj["metadata"]["resourceVersion"]:
                version = obj["metadata"]["resourceVersion"]
                self._apply(storage_key, "ADDED" if current is None else "MODIFIED", obj, current, snapshot.revision)
                obj["metadata"]["resourceVersion"] = version  # the object's own revision, not the snapshot's
        self.resource_version = max(self.resource_version, snapshot.revision)
        self.compacted_rv = self.resource_version
        with self._arrived:
            while self._inbox and self._inbox[0].revision <= snapshot.revision:
                self._inbox.popleft()
        if restart_watch and self._schedule is not None:
            self._watch_error = None
            self.backend.watch_external(snapshot.revision, self._arrive, self._watch_failed)

    def close(self) -> None:
        """Release the backend (its watch thread, connections, file)."""
        if self.backend is not None:
            self.backend.close()

    def _index(self, obj: dict[str, Any], object_key: ObjectKey) -> None:
        uid = obj["metadata"].get("uid")
        if uid:
            self._by_uid[uid] = object_key
        for owner in owner_uids(obj):
            self._dependents.setdefault(owner, set()).add(object_key)

    def _unindex(self, obj: dict[str, Any], object_key: ObjectKey) -> None:
        uid = obj["metadata"].get("uid")
        if uid:
            self._by_uid.pop(uid, None)
        for owner in owner_uids(obj):
            dependents = self._dependents.get(owner)
            if dependents is not None:
                dependents.discard(object_key)
                if not dependents:
                    del self._dependents[owner]

    def redecode(self, storage_key: str, decode: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Replace each cached object of a resource by ``decode(obj)`` where that is a new object, keeping its
        resourceVersion and sending no event: the cache reading its objects again after their decoding changed (a
        CRD's new defaults, applied on read). The backend keeps the bytes as written, as etcd does; ``decode``
        must leave metadata (identity, owners) as it is."""
        bucket = self._objects.get(storage_key)
        for key, obj in list((bucket or {}).items()):
            fresh = decode(obj)
            if fresh is not obj and bucket is not None:
                bucket[key] = fresh

    def drop_resource(self, storage_key: str) -> list[dict[str, Any]]:
        """Everything stored for a resource, for the caller to delete (a CRD went away)."""
        return list(self._objects.get(storage_key, {}).values())

    # --- watches ------------------------------------------------------------------------------------

    def subscribe(self, storage_key: str, sink: EventSink) -> None:
        self._sinks.setdefault(storage_key, set()).add(sink)

    def unsubscribe(self, storage_key: str, sink: EventSink) -> None:
        self._sinks.get(storage_key, set()).discard(sink)

    def events_since(self, storage_key: str, resource_version: int) -> list[StoredEvent]:
        """Events of one resource newer than ``resource_version``; caller checks ``compacted_rv`` first."""
        newer: list[StoredEvent] = []
        for event in reversed(self.history):
            if event.resource_version <= resource_version:
                break
            if event.storage_key == storage_key:
                newer.append(event)
        newer.reverse()
        return newer

    def objects_at(self, storage_key: str, namespace: str | None, resource_version: int) -> list[dict[str, Any]]:
        """The objects of a resource as they were at ``resource_version``: the cache with every later event of
        the resource undone; 410 once that version is compacted out of the history (an exact-version list)."""
        if resource_version < self.compacted_rv:
            raise expired("The resourceVersion for the provided list is too old.")
        state = {
            (obj["metadata"].get("namespace", ""), obj["metadata"]["name"]): obj
            for obj in self.objects(storage_key, namespace)
        }
        for event in reversed(self.events_since(storage_key, resource_version)):
            metadata = event.obj["metadata"]
            key = (metadata.get("namespace", ""), metadata["name"])
            if namespace is not None and key[0] != namespace:
                continue
            if event.type == "ADDED":
                state.pop(key, None)
            else:  # a deleted object's last state is the event's own object
                state[key] = event.prev if event.prev is not None else event.obj
        return list(state.values())

    def compact(self) -> None:
        """Compact the backend and forget all history and list snapshots, so that every resourceVersion handed
        out so far is too old: the revision moves past them (etcd: kube-apiserver's compact_rev_key write),
        and a fresh list returns a version that can be watched from."""
        try:
            revision = self.resource_version + 1 if self.backend is None else self.backend.compact()
        except StorageError as error:
            raise _storage_error(error) from None
        if revision > self.resource_version + 1 and self._schedule is not None:
            self._catch_up(revision)
        self.history.clear()
        self.resource_version = max(self.resource_version, revision)
        self.compacted_rv = self.resource_version
        self._snapshots.clear()

    # --- pagination ---------------------------------------------------------------------------------

    def save_snapshot(self, snapshot: ListSnapshot) -> str:
        snapshot_id = secrets.token_hex(8)
        self._snapshots[snapshot_id] = snapshot
        while len(self._snapshots) > MAX_LIST_SNAPSHOTS:
            self._snapshots.popitem(last=False)
        return snapshot_id

    @staticmethod
    def encode_continue(snapshot_id: str, offset: int, resource_version: int) -> str:
        raw = json.dumps({"s": snapshot_id, "o": offset, "rv": resource_version}, separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode()

    def resolve_continue(self, token: str) -> tuple[str, ListSnapshot, int]:
        """The snapshot (id and content) and offset a continue token points at; 410 when it is gone."""
        try:
            decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
            snapshot_id, offset = str(decoded["s"]), int(decoded["o"])
        except (binascii.Error, ValueError, KeyError, TypeError, UnicodeDecodeError):
            raise bad_request(f"continue key is not valid: {token!r}") from None
        snapshot = self._snapshots.get(snapshot_id)
        if snapshot is None:
            raise expired(
                "The provided continue parameter is too old to display a consistent list result. "
                "You can start a new list without the continue parameter."
            )
        self._snapshots.move_to_end(snapshot_id)
        return snapshot_id, snapshot, offset
