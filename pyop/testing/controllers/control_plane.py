"""The controllers a real control plane runs that operators rely on: CRD serving, garbage
collection of dependents (ownerReferences), foreground deletion and namespace cleanup.

CRD serving is synchronous (a CRD is Established as soon as it is stored). The rest runs in a
background task, as in kube-controller-manager: a client sees a deleted owner first and its
dependents disappear shortly after.

Garbage collection follows kube-controller-manager's: an owner reference is solid when an object with its uid
and name exists where the dependent may refer to it (a namespaced owner in the dependent's namespace, or a
cluster-scoped owner); a dependent whose owners are all absent (never existed, gone, or in another namespace) is
deleted, and dangling references of a dependent with a solid owner are removed. A reference to an owner in
another namespace, and a cluster-scoped dependent naming a namespaced owner (which is never collected), get a
Warning Event `OwnerRefInvalidNamespace` on the dependent. Foreground deletion deletes every dependent and waits
only for those whose reference sets `blockOwnerDeletion`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import Callable
from typing import Any

from pyop.api.status import ApiError
from pyop.apiserver.registry.operations import FOREGROUND_FINALIZER, Operations, WriteOptions
from pyop.apiserver.registry.resources import ResourceType, types_from_crd
from pyop.apiserver.storage.store import owner_uids
from pyop.testing.authorization.rbac import CLUSTER_ROLES
from pyop.testing.builtins import kinds
from pyop.testing.controllers.kubernetes_service import STORAGE_KEYS as KUBERNETES_SERVICE_KEYS
from pyop.testing.controllers.kubernetes_service import KubernetesService
from pyop.testing.controllers.rbac import aggregate_cluster_roles, revoke_service_account_tokens
from pyop.testing.controllers.resource_quota import ResourceQuotaController
from pyop.testing.controllers.root_ca import RootCAPublisher
from pyop.testing.controllers.service_accounts import ServiceAccountsController
from pyop.testing.crds.read_defaults import redefault_stored_objects
from pyop.testing.webhooks.config import CONFIGURATION_KEYS

log = logging.getLogger(__name__)

_MANAGER = "pyop-test-controller-manager"


class Controllers:
    def __init__(self, operations: Operations, *, advertise_address: str | None = None) -> None:
        self.operations = operations
        self.store = operations.store
        self._queue: asyncio.Queue[tuple[str, Any]] | None = None
        self._task: asyncio.Task[None] | None = None
        # Called when a webhook configuration is stored or deleted (the dispatcher recompiles them).
        self.on_webhooks_changed: Callable[[], None] | None = None
        self.service_accounts = ServiceAccountsController(operations)
        self.root_ca = RootCAPublisher(operations)  # publishes once the server knows its CA (`publish`)
        self.resource_quotas = ResourceQuotaController(operations)  # status.hard/used, after every commit
        self.kubernetes_service = KubernetesService(operations, advertise_address)  # once listening (`serve`)
        # What a commit of these resources sets off besides garbage collection (looked up once per commit,
        # instead of comparing its storage key with each).
        self._reactions: dict[str, Callable[[str, dict[str, Any], dict[str, Any] | None], None]] = {
            kinds.CRD_STORAGE_KEY: self._crd_committed,
            **dict.fromkeys(CONFIGURATION_KEYS, self._webhooks_committed),
            CLUSTER_ROLES: self._cluster_role_committed,
            "serviceaccounts": self._service_account_committed,
            "namespaces": self._namespace_committed,
            "configmaps": self._config_map_committed,
            # default/kubernetes: its Service, Endpoints and EndpointSlice are put right when changed or deleted.
            **{key: functools.partial(self.kubernetes_service.committed, key) for key in KUBERNETES_SERVICE_KEYS},
        }
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
        self.resource_quotas.committed(resource_type, event_type, obj)
        react = self._reactions.get(resource_type.storage_key)
        if react is not None:
            react(event_type, obj, prev)
        if event_type == "DELETED":
            self._enqueue("removed", obj)
            return
        references = obj["metadata"].get("ownerReferences")
        if references and references != ((prev or {}).get("metadata") or {}).get("ownerReferences"):
            self._enqueue("verify", (resource_type.storage_key, obj["metadata"].get("namespace", ""), obj))
        newly_deleting = obj["metadata"].get("deletionTimestamp") and not (
            prev and prev["metadata"].get("deletionTimestamp")
        )
        if not newly_deleting:
            return
        if resource_type.storage_key == "namespaces":
            self._enqueue("namespace", obj["metadata"]["name"])
        if resource_type.storage_key == kinds.CRD_STORAGE_KEY:
            self._enqueue("crd-cleanup", obj["metadata"]["name"])
        if FOREGROUND_FINALIZER in (obj["metadata"].get("finalizers") or []):
            self._enqueue("foreground", obj["metadata"]["uid"])

    def _crd_committed(self, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None) -> None:
        self._sync_crd(event_type, obj)
        if event_type == "MODIFIED":
            redefault_stored_objects(self.store, obj, prev)

    def _webhooks_committed(self, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None) -> None:
        if self.on_webhooks_changed is not None:
            self.on_webhooks_changed()

    def _cluster_role_committed(self, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None) -> None:
        self._enqueue("aggregate", None)

    def _service_account_committed(self, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None) -> None:
        if event_type == "DELETED":
            revoke_service_account_tokens(self.operations.users, obj)
            self.service_accounts.account_deleted(obj)

    def _namespace_committed(self, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None) -> None:
        if event_type == "ADDED":
            self.service_accounts.namespace_added(obj)
            self.root_ca.namespace_added(obj)

    def _config_map_committed(self, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None) -> None:
        self.root_ca.config_map_changed(event_type, obj)

    def _sync_crd(self, event_type: str, crd: dict[str, Any]) -> None:
        name = crd["metadata"]["name"]
        resources = self.operations.resources
        if event_type != "DELETED":
            resources.serve_crd(name, types_from_crd(crd))
            return
        storage_type = self._served_storage_type(crd)
        if storage_type is not None:
            self.operations.remove_all(storage_type)
            for watcher in list(self.operations.watchers):
                if watcher.resource_type.storage_key == storage_type.storage_key:
                    watcher.close()
        resources.unserve_crd(name)

    def _served_storage_type(self, crd: dict[str, Any]) -> ResourceType | None:
        """The resource type a CRD's objects are stored under, while any of its versions is served."""
        resources = self.operations.resources
        served = [rt for rt in types_from_crd(crd) if resources.find(rt.group, rt.version, rt.plural) is not None]
        return (self.operations.storage_type(served[0].storage_key) or served[0]) if served else None

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
                elif kind == "verify":
                    self._verify_owners(*item)
                elif kind == "crd-cleanup":
                    self._clean_crd(item)
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
        group = obj.get("apiVersion", "").rpartition("/")[0]
        for resource_type in self.operations.resources.versions_of_kind(group, obj.get("kind", "")):
            if resource_type.custom and kinds.crd_terminating(self.store, resource_type):
                self._enqueue("crd-cleanup", f"{resource_type.plural}.{resource_type.group}")
                break

    def _verify_owners(self, storage_key: str, namespace: str, seen: dict[str, Any]) -> None:
        """kube's attemptToDeleteItem for one dependent: delete it when every owner is absent, else drop the
        dangling references; report references that cross namespaces."""
        name = seen["metadata"]["name"]
        dependent = self.store.get(storage_key, namespace, name)
        if dependent is None or dependent["metadata"].get("uid") != seen["metadata"].get("uid"):
            return
        if dependent["metadata"].get("deletionTimestamp"):
            return
        references = [r for r in dependent["metadata"].get("ownerReferences") or [] if isinstance(r, dict)]
        solid, dangling, unresolvable = [], [], []
        for reference in references:
            verdict = self._owner_verdict(reference, namespace)
            if verdict == "solid":
                solid.append(reference)
            elif verdict == "unresolvable":
                unresolvable.append(reference)
            else:
                dangling.append(reference)
            if verdict in ("other-namespace", "unresolvable"):
                self._invalid_namespace_event(storage_key, dependent, reference)
        if solid or unresolvable:
            for reference in dangling:
                self.operations.remove_owner_reference(storage_key, namespace, name, reference.get("uid", ""))
            return
        if dangling:
            self._delete_key((storage_key, namespace, name))

    def _owner_verdict(self, reference: dict[str, Any], namespace: str) -> str:
        """solid, absent, other-namespace (a namespaced owner elsewhere) or unresolvable (a cluster-scoped
        dependent naming a namespaced kind, which kube never collects)."""
        owner_type = self._owner_type(reference)
        if owner_type is not None and owner_type.namespaced and not namespace:
            return "unresolvable"
        key = self.store.key_of_uid(str(reference.get("uid", "")))
        if key is None:
            return "absent"
        owner_storage, owner_namespace, owner_name = key
        if owner_name != reference.get("name"):
            return "absent"
        if owner_namespace and owner_namespace != namespace:
            return "other-namespace"
        return "solid"

    def _owner_type(self, reference: dict[str, Any]) -> ResourceType | None:
        group, _, version = str(reference.get("apiVersion", "")).rpartition("/")
        return self.operations.resources.for_kind(group, version, str(reference.get("kind", "")))

    def _invalid_namespace_event(self, storage_key: str, dependent: dict[str, Any], reference: dict[str, Any]) -> None:
        """The Warning Event kube's garbage collector records on a dependent whose owner reference cannot be
        in its namespace."""
        events = self.operations.resources.find("", "v1", "events")
        metadata = dependent["metadata"]
        namespace = metadata.get("namespace") or "default"
        if events is None:
            return
        resource_type = self.operations.storage_type(storage_key)
        api_version = f"{resource_type.group}/{resource_type.version}".lstrip("/") if resource_type else ""
        shown = (
            f"[{reference.get('apiVersion', '')}/{reference.get('kind', '')}, "
            f"namespace: {metadata.get('namespace', '')}, name: {reference.get('name', '')}, "
            f"uid: {reference.get('uid', '')}]"
        )
        now = self.operations.now()
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{metadata['name']}.", "namespace": namespace},
            "involvedObject": {
                "apiVersion": api_version,
                "kind": resource_type.kind if resource_type else "",
                "name": metadata["name"],
                "namespace": metadata.get("namespace", ""),
                "uid": metadata.get("uid", ""),
            },
            "reason": "OwnerRefInvalidNamespace",
            "message": f"ownerRef {shown} does not exist in namespace {json.dumps(metadata.get('namespace', ''))}",
            "type": "Warning",
            "source": {"component": "garbage-collector-controller"},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        self.operations.create(events, namespace, event, WriteOptions())

    def _foreground(self, owner_uid: str) -> None:
        for key in self.store.dependents_of(owner_uid):
            self._delete_key(key)
        self._finish_foreground_if_done(owner_uid)

    def _finish_foreground_if_done(self, owner_uid: str) -> None:
        key = self.store.key_of_uid(owner_uid)
        if key is None or any(self._blocks(dependent, owner_uid) for dependent in self.store.dependents_of(owner_uid)):
            return
        owner = self.store.get(*key)
        if (
            owner
            and owner["metadata"].get("deletionTimestamp")
            and FOREGROUND_FINALIZER in (owner["metadata"].get("finalizers") or [])
        ):
            self.operations.remove_finalizer(*key, FOREGROUND_FINALIZER, manager=_MANAGER)

    def _blocks(self, key: tuple[str, str, str], owner_uid: str) -> bool:
        """Whether a dependent holds its owner's foreground deletion: its reference sets blockOwnerDeletion."""
        dependent = self.store.get(*key)
        references = (dependent or {}).get("metadata", {}).get("ownerReferences") or []
        return any(r.get("uid") == owner_uid and r.get("blockOwnerDeletion") is True for r in references)

    def _clean_crd(self, name: str) -> None:
        """apiextensions' finalizer controller: delete every custom resource of a CRD being deleted (each waits for
        its own finalizers), then let the CRD go."""
        crd = self.store.get(kinds.CRD_STORAGE_KEY, "", name)
        if crd is None or not crd["metadata"].get("deletionTimestamp"):
            return
        storage_type = self._served_storage_type(crd)
        if storage_type is not None:
            key = storage_type.storage_key
            for obj in list(self.store.objects(key)):
                self._delete_key((key, obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
            if any(True for _ in self.store.objects(key)):
                return  # held by their finalizers: the last removal comes back here
        self.operations.remove_finalizer(kinds.CRD_STORAGE_KEY, "", name, kinds.CRD_CLEANUP_FINALIZER, manager=_MANAGER)

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
