"""The controllers a real control plane runs that operators rely on: CRD serving, garbage
collection of dependents (ownerReferences), foreground deletion and namespace cleanup.

CRD serving is synchronous (a CRD is Established as soon as it is stored). The rest runs in a
background task, as in kube-controller-manager: a client sees a deleted owner first and its
dependents disappear shortly after. Not modelled: ``blockOwnerDeletion`` (foreground deletion
waits for all dependents), dependents whose owner never existed, and cross-namespace owners.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from pyop.testing import kinds
from pyop.testing.authorization.controllers import aggregate_cluster_roles, revoke_service_account_tokens
from pyop.testing.authorization.rbac import CLUSTER_ROLES
from pyop.testing.errors import ApiError
from pyop.testing.operations import FOREGROUND_FINALIZER, Operations, WriteOptions
from pyop.testing.resources import ResourceType, types_from_crd
from pyop.testing.store import owner_uids
from pyop.testing.webhook_config import CONFIGURATION_KEYS

log = logging.getLogger(__name__)

_MANAGER = "pyop-test-controller-manager"


class Controllers:
    def __init__(self, operations: Operations) -> None:
        self.operations = operations
        self.store = operations.store
        self._queue: asyncio.Queue[tuple[str, Any]] | None = None
        self._task: asyncio.Task[None] | None = None
        # Called when a webhook configuration is stored or deleted (the dispatcher recompiles them).
        self.on_webhooks_changed: Callable[[], None] | None = None
        operations.on_commit = self.on_commit

    def start(self) -> None:
        self._queue = asyncio.Queue()
        self._task = asyncio.create_task(self._run(), name="pyop-test-controllers")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def _enqueue(self, kind: str, item: Any) -> None:
        if self._queue is not None:
            self._queue.put_nowait((kind, item))

    # --- reactions to commits (synchronous) ---------------------------------------------------------

    def on_commit(
        self, resource_type: ResourceType, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None
    ) -> None:
        if resource_type.storage_key == kinds.CRD_STORAGE_KEY:
            self._sync_crd(event_type, obj)
        elif resource_type.storage_key in CONFIGURATION_KEYS and self.on_webhooks_changed is not None:
            self.on_webhooks_changed()
        elif resource_type.storage_key == CLUSTER_ROLES:
            self._enqueue("aggregate", None)
        elif resource_type.storage_key == "serviceaccounts" and event_type == "DELETED":
            revoke_service_account_tokens(self.operations.users, obj)
        if event_type == "DELETED":
            self._enqueue("removed", obj)
            return
        newly_deleting = obj["metadata"].get("deletionTimestamp") and not (
            prev and prev["metadata"].get("deletionTimestamp")
        )
        if not newly_deleting:
            return
        if resource_type.storage_key == "namespaces":
            self._enqueue("namespace", obj["metadata"]["name"])
        if FOREGROUND_FINALIZER in (obj["metadata"].get("finalizers") or []):
            self._enqueue("foreground", obj["metadata"]["uid"])

    def _sync_crd(self, event_type: str, crd: dict[str, Any]) -> None:
        name = crd["metadata"]["name"]
        resources = self.operations.resources
        if event_type != "DELETED":
            resources.serve_crd(name, types_from_crd(crd))
            return
        served = [rt for rt in types_from_crd(crd) if resources.find(rt.group, rt.version, rt.plural) is not None]
        if served:
            storage_type = self.operations.storage_type(served[0].storage_key) or served[0]
            self.operations.remove_all(storage_type)
            for watcher in list(self.operations.watchers):
                if watcher.resource_type.storage_key == storage_type.storage_key:
                    watcher.close()
        resources.unserve_crd(name)

    # --- background work ------------------------------------------------------------------------------

    async def _run(self) -> None:
        assert self._queue is not None
        while True:
            kind, item = await self._queue.get()
            try:
                if kind == "removed":
                    self._after_removal(item)
                elif kind == "foreground":
                    self._foreground(item)
                elif kind == "namespace":
                    self._clean_namespace(item)
                elif kind == "aggregate":
                    aggregate_cluster_roles(self.operations)
            except ApiError as error:  # a client raced us (conflict, gone): the next event retries
                log.debug("controller step %s failed: %s", kind, error.message)
            except Exception:  # never let one bad object stop garbage collection for the whole server
                log.exception("controller step %s failed", kind)

    def _delete_key(self, key: tuple[str, str, str]) -> None:
        storage_key, namespace, name = key
        resource_type = self.operations.storage_type(storage_key)
        obj = self.store.get(storage_key, namespace, name)
        if resource_type is None or obj is None or obj["metadata"].get("deletionTimestamp"):
            return
        self.operations.delete(resource_type, namespace, name, {"propagationPolicy": "Background"}, WriteOptions())

    def _after_removal(self, obj: dict[str, Any]) -> None:
        uid = obj["metadata"].get("uid", "")
        for key in self.store.dependents_of(uid):
            dependent = self.store.get(*key)
            if dependent is None:
                continue
            living_owners = [owner for owner in owner_uids(dependent) if owner != uid and self.store.exists_uid(owner)]
            if living_owners:
                self.operations.remove_owner_reference(*key, uid)
            else:
                self._delete_key(key)
        for owner_uid in owner_uids(obj):
            self._finish_foreground_if_done(owner_uid)
        namespace = obj["metadata"].get("namespace")
        if namespace:
            self._finish_namespace_if_empty(namespace)

    def _foreground(self, owner_uid: str) -> None:
        for key in self.store.dependents_of(owner_uid):
            self._delete_key(key)
        self._finish_foreground_if_done(owner_uid)

    def _finish_foreground_if_done(self, owner_uid: str) -> None:
        key = self.store.key_of_uid(owner_uid)
        if key is None or self.store.dependents_of(owner_uid):
            return
        owner = self.store.get(*key)
        if (
            owner
            and owner["metadata"].get("deletionTimestamp")
            and FOREGROUND_FINALIZER in (owner["metadata"].get("finalizers") or [])
        ):
            self.operations.remove_finalizer(*key, FOREGROUND_FINALIZER, manager=_MANAGER)

    def _clean_namespace(self, namespace: str) -> None:
        for storage_key in self.store.storage_keys():
            resource_type = self.operations.storage_type(storage_key)
            if resource_type is None or not resource_type.namespaced:
                continue
            for obj in list(self.store.objects(storage_key, namespace)):
                self._delete_key((storage_key, namespace, obj["metadata"]["name"]))
        self._finish_namespace_if_empty(namespace)

    def _finish_namespace_if_empty(self, namespace: str) -> None:
        ns = self.store.get("namespaces", "", namespace)
        if ns is None or not ns["metadata"].get("deletionTimestamp") or self.store.count_in_namespace(namespace):
            return
        self.operations.remove_finalizer("namespaces", "", namespace, kinds.NAMESPACE_FINALIZER, manager=_MANAGER)
