"""Objects in etcd v3, laid out as kube-apiserver lays them out, with etcd's revisions as resourceVersions.

Keys: ``<prefix>/<storage_key>/<namespace>/<name>`` (``<prefix>/<storage_key>/<name>`` for cluster-scoped objects,
as kube-apiserver's ``/registry/namespaces/default``); values: the object's JSON. A write is one transaction whose
compare makes optimistic concurrency hold across replicas: a create requires the key to be absent (create_revision
0), an update or delete that names the revision it read requires the key's mod_revision to still be it; a failed
compare is ``StorageConflict`` (409). The transaction's revision is the object's resourceVersion.

``compact`` writes ``<prefix>/compact_rev_key`` (kube-apiserver's own compaction marker) and compacts etcd at that
write's revision, so every earlier revision is gone for readers and watchers alike (410 Expired).

With ``compaction_interval`` (kube-apiserver's --etcd-compaction-interval, 5 minutes by default in
``backend_from_flags``) a daemon thread compacts etcd every interval at the revision it saw one interval earlier,
so etcd keeps a window of history rather than every revision ever written. The watch cache's own history is not
touched: only a replica whose etcd watch fell a whole interval behind has to reload. Replicas compacting the same
etcd is harmless (a revision already compacted is skipped).

``watch_external`` runs one etcd watch on the whole prefix in a daemon thread, from the revision the cache holds,
and reports each write as a ``BackendEvent`` in revision order (this process's own writes included: the cache drops
what it already has). A broken stream is reopened from the last revision seen; a compacted start revision ends
the watch with ``StorageExpired`` through ``on_error`` (the cache must reload).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from pyop.apiserver.storage.backend import (
    BackendEvent,
    Snapshot,
    StorageConflict,
    StorageError,
    StorageExpired,
    StorageUnavailable,
    object_with_revision,
)
from pyop.apiserver.storage.etcd.client import (
    EtcdClient,
    Watch,
    compare_absent,
    compare_mod_revision,
    op_delete,
    op_put,
    op_range,
    prefix_end,
)

LOAD_PAGE = 500
COMPACT_KEY = "compact_rev_key"
RECONNECT_DELAY = 0.5


class EtcdBackend:
    def __init__(self, client: EtcdClient, prefix: str = "/registry", *, compaction_interval: float = 0) -> None:
        if not prefix.startswith("/") or prefix.endswith("/") and prefix != "/":
            raise ValueError(f"etcd prefix {prefix!r} must start with / and not end with one (e.g. /registry)")
        self.client = client
        self.prefix = prefix.rstrip("/")
        self._root = (self.prefix + "/").encode()
        self._watch: Watch | None = None
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()
        self._compactor: threading.Thread | None = None
        if compaction_interval > 0:
            self._compactor = threading.Thread(
                target=self._compact_periodically, args=(compaction_interval,), name="etcd-compactor", daemon=True
            )
            self._compactor.start()

    # --- keys ---------------------------------------------------------------------------------------

    def key(self, storage_key: str, namespace: str, name: str) -> bytes:
        if namespace:
            return f"{self.prefix}/{storage_key}/{namespace}/{name}".encode()
        return f"{self.prefix}/{storage_key}/{name}".encode()

    def parse_key(self, key: bytes) -> tuple[str, str, str] | None:
        """(storage_key, namespace, name), or None for a key that is not an object's (the compaction marker)."""
        if not key.startswith(self._root):
            return None
        parts = key[len(self._root) :].decode("utf-8", "replace").split("/")
        if len(parts) == 3:
            return parts[0], parts[1], parts[2]
        if len(parts) == 2:
            return parts[0], "", parts[1]
        return None

    # --- the Backend protocol -----------------------------------------------------------------------

    def load(self) -> Snapshot:
        """Every object under the prefix at one revision, read in pages pinned to the first page's revision."""
        start, end = self._root, prefix_end(self._root)
        revision = 0
        items: list[tuple[str, dict[str, Any]]] = []
        while True:
            header, kvs, more = self.client.range(start, end, revision=revision, limit=LOAD_PAGE)
            revision = revision or header
            for kv in kvs:
                parsed = self.parse_key(kv.key)
                if parsed is not None:
                    items.append((parsed[0], object_with_revision(json.loads(kv.value), kv.mod_revision)))
            if not more or not kvs:
                return Snapshot(revision, items)
            start = kvs[-1].key + b"\x00"

    def commit(
        self,
        storage_key: str,
        event_type: str,
        namespace: str,
        name: str,
        obj: dict[str, Any] | None,
        expected_rv: int | None,
    ) -> int:
        key = self.key(storage_key, namespace, name)
        if event_type == "DELETED":
            operation = op_delete(key)
        else:
            operation = op_put(key, json.dumps(obj, separators=(",", ":")).encode())
        if event_type == "ADDED":
            compare = [compare_absent(key)]
        elif expected_rv is not None:
            compare = [compare_mod_revision(key, expected_rv)]
        else:
            compare = []
        succeeded, revision, responses = self.client.txn(compare, [operation], [op_range(key)])
        if not succeeded:
            kvs = (responses[0].get("response_range") or {}).get("kvs") if responses else None
            winner = int(kvs[0].get("mod_revision", 0)) if kvs else 0
            raise StorageConflict(storage_key, namespace, name, exists=bool(kvs), revision=winner)
        if event_type == "DELETED" and not int((responses[0].get("response_delete_range") or {}).get("deleted", 0)):
            raise StorageConflict(storage_key, namespace, name, exists=False)  # nothing was there to delete
        return revision

    def compact(self) -> int:
        revision = self.client.put(f"{self.prefix}/{COMPACT_KEY}".encode(), b"")
        self.client.compact(revision)
        return revision

    def _compact_periodically(self, interval: float) -> None:
        previous = 0
        while not self._stopped.wait(interval):
            try:
                current, _, _ = self.client.range(f"{self.prefix}/{COMPACT_KEY}".encode())
                if previous:
                    self.client.compact(previous)
                previous = current
            except StorageExpired:
                previous = 0  # another replica compacted further already
            except StorageUnavailable:
                pass  # etcd away for now: try again next interval

    def watch_external(
        self, since: int, on_event: Callable[[BackendEvent], None], on_error: Callable[[StorageError], None]
    ) -> None:
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError("EtcdBackend.watch_external: already watching")  # again only after it ended
        self._thread = threading.Thread(
            target=self._run_watch, args=(since, on_event, on_error), name=f"etcd-watch {self.prefix}", daemon=True
        )
        self._thread.start()

    def _run_watch(
        self, since: int, on_event: Callable[[BackendEvent], None], on_error: Callable[[StorageError], None]
    ) -> None:
        seen = since
        while not self._stopped.is_set():
            try:
                self._watch = self.client.watch(self._root, prefix_end(self._root), start_revision=seen + 1)
                if self._stopped.is_set():
                    self._watch.close()
                    return
                for response in self._watch:
                    if response.canceled:
                        if response.compact_revision:
                            raise StorageExpired(seen + 1, response.compact_revision)
                        raise StorageUnavailable(f"etcd canceled the watch: {response.cancel_reason}")
                    for event in response.events:
                        seen = event.kv.mod_revision
                        parsed = self.parse_key(event.kv.key)
                        if parsed is None:  # the compaction marker
                            on_event(BackendEvent(event.kv.mod_revision, "PROGRESS", "", "", "", None))
                            continue
                        obj = None
                        if event.type == "PUT":
                            try:
                                obj = object_with_revision(json.loads(event.kv.value), event.kv.mod_revision)
                            except (ValueError, KeyError, TypeError):
                                continue  # not an object this server wrote: not ours to serve
                        on_event(BackendEvent(event.kv.mod_revision, event.type, *parsed, obj))
            except StorageExpired as error:
                if not self._stopped.is_set():
                    on_error(error)
                return
            except StorageUnavailable:
                pass  # etcd restarting or a connection dropped: reopen from the last revision seen
            self._stopped.wait(RECONNECT_DELAY)

    def close(self) -> None:
        self._stopped.set()
        watch = self._watch
        if watch is not None:
            watch.close()
        for thread in (self._thread, self._compactor):
            if thread is not None:
                thread.join(timeout=5)
        self.client.close()
