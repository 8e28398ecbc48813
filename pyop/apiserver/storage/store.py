"""In-memory object storage with one resourceVersion counter across all kinds, as etcd has.

Objects are stored as plain dicts and never mutated after a commit: readers (lists, watch
events, list snapshots) share references safely, and a write costs O(1) dict operations plus
fan-out to the open watches of that resource.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from collections import OrderedDict, deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from pyop.api.status import bad_request, expired

ObjectKey = tuple[str, str, str]  # (storage key such as "deployments.apps", namespace, name)

MAX_LIST_SNAPSHOTS = 256


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


class Store:
    def __init__(self, history_limit: int) -> None:
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

    # --- reads --------------------------------------------------------------------------------------

    def get(self, storage_key: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self._objects.get(storage_key, {}).get((namespace, name))

    def objects(self, storage_key: str, namespace: str | None = None) -> Iterator[dict[str, Any]]:
        for (obj_namespace, _), obj in self._objects.get(storage_key, {}).items():
            if namespace is None or obj_namespace == namespace:
                yield obj

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
        """Store (or remove, for DELETED) ``obj`` under a fresh resourceVersion and notify watches."""
        self.resource_version += 1
        rv = self.resource_version
        metadata = obj["metadata"]
        metadata["resourceVersion"] = str(rv)
        key = (metadata.get("namespace", ""), metadata["name"])
        bucket = self._objects.setdefault(storage_key, {})
        object_key = (storage_key, key[0], key[1])
        if event_type == "DELETED":
            if prev is not None:
                self._unindex(prev, object_key)
            if bucket.pop(key, None) is not None:
                self._namespace_counts[key[0]] -= 1
        else:
            if key not in bucket:
                self._namespace_counts[key[0]] = self._namespace_counts.get(key[0], 0) + 1
            bucket[key] = obj
            if prev is None or not _same_identity(prev, obj):
                if prev is not None:
                    self._unindex(prev, object_key)
                self._index(obj, object_key)
        event = StoredEvent(rv, event_type, storage_key, obj, prev)
        if len(self.history) >= self.history_limit:
            self.compacted_rv = self.history.popleft().resource_version
        self.history.append(event)
        for sink in list(self._sinks.get(storage_key, ())):
            sink.deliver(event)
        return rv

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

    def compact(self) -> None:
        """Forget all history and list snapshots, so that every resourceVersion handed out so far is
        too old: the counter moves past them (as an etcd compaction revision would), and a fresh
        list returns a version that can be watched from."""
        self.history.clear()
        self.resource_version += 1
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
