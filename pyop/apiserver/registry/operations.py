"""The generic registry: create, read, update, patch, delete and watch with Kubernetes semantics.

This is the test server's equivalent of kube-apiserver's ``registry/generic`` store: it owns
resourceVersion preconditions, generation, finalizers and deletion, the status and scale
subresources, server-side apply bookkeeping and dry runs. HTTP parsing lives in ``server.py``;
asynchronous cleanup (garbage collection, namespace deletion) in ``controllers.py``.

While admission webhooks are configured (``admission_active``), writes stop at the points where
kube-apiserver runs mutating and validating admission (``admission.suspend``); the webhook
dispatcher (``webhook_dispatch.py``) answers them. Without webhooks those points are skipped.
"""

from __future__ import annotations

import math
import secrets
import string
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pyop.api.paths import path_segment_problems
from pyop.api.selectors import (
    FieldRequirement,
    Requirement,
    fields_match,
    labels_match,
    selector_from_label_selector,
)
from pyop.api.status import (
    STALE_OBJECT,
    ApiError,
    StatusCause,
    already_exists,
    bad_request,
    conflict,
    expired,
    invalid,
    not_found,
    qualified,
)
from pyop.api.validation import dns1123_label_problems, dns1123_subdomain_problems
from pyop.apiserver.admission.plugins import (
    CREATE,
    UPDATE,
    Attributes,
    MutatingPlugin,
    PluginChoice,
    ValidatingPlugin,
    choose,
    run_mutating,
    run_validating,
)
from pyop.apiserver.admission.points import MUTATING, VALIDATING, AdmissionPoint, Stale, operation_options, suspend
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.endpoints.watch import INITIAL_EVENTS_END, Watcher, served_as
from pyop.apiserver.registry import managed_fields
from pyop.apiserver.registry.clock import format_time, utc_now
from pyop.apiserver.registry.conversion import storage_api_version, stored_as
from pyop.apiserver.registry.kinds import CompiledKinds, SchemaKinds
from pyop.apiserver.registry.list_options import list_read, too_large
from pyop.apiserver.registry.namespaces import namespace_state
from pyop.apiserver.registry.patch import clone_json, json_patch, merge_patch, strategic_merge
from pyop.apiserver.registry.resources import ResourceRegistry, ResourceType
from pyop.apiserver.registry.strategy import (
    DEFAULT_FIELD_VALIDATION,
    RESTStrategy,
    desired_state_changed,
    strategic_merge_unsupported,
)
from pyop.apiserver.storage.store import ListSnapshot, Store
from pyop.uids import new_uid

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (MERGE_PATCH, JSON_PATCH, STRATEGIC_PATCH, APPLY_PATCH)

FOREGROUND_FINALIZER = "foregroundDeletion"
_SERVER_METADATA = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
)
_IGNORED_FOR_NOOP = ("resourceVersion", "managedFields")


@dataclass
class WriteOptions:
    dry_run: bool = False
    field_manager: str = ""
    force: bool = False
    field_validation: str = DEFAULT_FIELD_VALIDATION  # Strict, Warn (the API's default) or Ignore
    default_manager: str = "unknown"  # from the User-Agent, when no fieldManager is given
    user: UserInfo | None = None  # who asks (for admission webhooks' userInfo)
    warnings: list[str] = field(default_factory=list)  # filled by the write: sent back as Warning headers

    @property
    def manager(self) -> str:
        return self.field_manager or self.default_manager

    @property
    def strict_fields(self) -> bool:
        return self.field_validation == "Strict"


def _get_path(obj: dict[str, Any], path: str) -> Any:
    value: Any = obj
    for part in path.lstrip(".").split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    parts = path.lstrip(".").split(".")
    target = obj
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value


def _same_but_volatile(current: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether the two objects are equal but for the metadata fields a no-op write may change (resourceVersion,
    managedFields): what comparing the two objects with those fields left out says, without building the two
    copies (every update asks; shared subtrees are decided by identity, as dict equality decides them)."""
    if current.keys() != new.keys():
        return False
    # The fields outside metadata first: each decided by identity or one comparison, and where a write that changes
    # something most often differs (a status patch's status); the same answer in any order.
    for key, value in current.items():
        if key != "metadata":
            other = new[key]
            if other is not value and other != value:
                return False
    if "metadata" not in current:
        return True
    old_meta, new_meta = current["metadata"], new["metadata"]
    shared = 0  # old_meta's names compared, each found in new_meta
    for name, item in old_meta.items():
        if name in _IGNORED_FOR_NOOP:
            continue
        found = new_meta.get(name, _ABSENT)
        if found is not item and (found is _ABSENT or found != item):
            return False
        shared += 1
    volatile = 0
    for name in _IGNORED_FOR_NOOP:
        if name in new_meta:
            volatile += 1
    return len(new_meta) - volatile == shared  # no other name in new_meta


_ABSENT = object()


def _unchanged(current: dict[str, Any], new: dict[str, Any], bumped: bool) -> bool:
    """`_same_but_volatile(current, new)` of a write that did or did not bump the generation: a bumped one differs
    from the stored object in ``metadata.generation``, so it is not compared (an update's whole spec, as a PUT
    sends it, for the answer the generation already gave)."""
    return not bumped and _same_but_volatile(current, new)


def _in_wire_order(body: dict[str, Any]) -> bool:
    """apiVersion, kind and a metadata map first, in that order, as the server writes objects."""
    keys = iter(body)
    return (
        next(keys, None) == "apiVersion"
        and next(keys, None) == "kind"
        and next(keys, None) == "metadata"
        and isinstance(body["metadata"], dict)
    )


def _writable_copy(obj: dict[str, Any]) -> dict[str, Any]:
    """A new top level and ``metadata`` over shared contents: all a write changes in place.

    Stored objects are never modified, so the rest (spec, status, managedFields entries) can be
    shared between versions of an object; a deep copy per write cost more than the write itself.
    """
    copy = dict(obj)
    metadata = copy.get("metadata")
    if isinstance(metadata, dict):
        copy["metadata"] = dict(metadata)
    return copy


def _is_being_deleted(obj: dict[str, Any]) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp"))


class Operations:
    """The registry of every kind. Request bodies handed to it become its own: they are pruned,
    defaulted and stored without a defensive copy (a copy per write was the largest cost of one)."""

    def __init__(
        self,
        store: Store,
        resources: ResourceRegistry,
        *,
        clock: Callable[[], datetime],
        users: dict[str, UserInfo],
        bookmark_interval: float,
        builtin: CompiledKinds | None = None,
    ) -> None:
        """``builtin``: the server's compiled-in kinds (the test API server's built-ins); none: every kind is
        defined by its schema."""
        self.builtin: CompiledKinds = builtin or SchemaKinds()
        self.field_manager = managed_fields.FieldManager(self.builtin.kubernetes_version, self.builtin.definition)
        self.store = store
        self.resources = resources
        self.clock = clock
        self.users = users
        self.bookmark_interval = bookmark_interval
        self.watchers: set[Watcher] = set()
        self._formatted_second: int | None = None
        self._formatted_time = ""
        # True while a webhook configuration exists: writes then stop at their admission points.
        self.admission_active = False
        # Compiled-in admission plugins (kube-apiserver's ServiceAccount, Priority ...), run on every write
        # right after decoding, before any webhook; a server plugs in its own (`admission.plugins`).
        self.admission_plugins: tuple[MutatingPlugin, ...] = ()
        # Compiled-in validating plugins (LimitRanger, PodSecurity; ResourceQuota after the webhooks), run after
        # the kind's validation on every create and update that the registry admits.
        self.validating_plugins: tuple[ValidatingPlugin, ...] = ()
        # Of those, the ones that may handle an operation on a resource and subresource, decided once for each:
        # (operation, id(resource type), subresource) -> (resource type, plugins chosen from, choice); the entry
        # holds the resource type, so its id stays its own.
        self._plugin_choices: dict[tuple[str, int, str], tuple[Any, ...]] = {}
        # Per-kind strategies, built on first use and rebuilt when a CRD's served type is replaced.
        self._strategies: dict[tuple[str, str], RESTStrategy] = {}
        # Set by the controllers: called after every committed change.
        self.on_commit: Callable[[ResourceType, str, dict[str, Any], dict[str, Any] | None], None] | None = None

    def plugins_for(self, operation: str, resource_type: ResourceType, subresource: str) -> PluginChoice:
        """The compiled-in plugins that may handle ``operation`` on the resource and subresource (`choose`),
        decided on first use and again when a server plugs in other plugins or the resource type is replaced."""
        key = (operation, id(resource_type), subresource)
        entry = self._plugin_choices.get(key)
        mutating, validating = self.admission_plugins, self.validating_plugins
        if entry is None or entry[1] is not mutating or entry[2] is not validating:
            if len(self._plugin_choices) > 4096:  # resource types replaced many times over: start over
                self._plugin_choices.clear()
            choice = choose(mutating, validating, operation, resource_type, subresource)
            entry = self._plugin_choices[key] = (resource_type, mutating, validating, choice)
        return entry[3]  # type: ignore[no-any-return]

    def strategy(self, resource_type: ResourceType) -> RESTStrategy:
        """The kind's strategy: what the registry asks instead of testing storage keys (see registry/strategy.py)."""
        key = (resource_type.storage_key, resource_type.version)
        strategy = self._strategies.get(key)
        if strategy is None or strategy.resource_type is not resource_type:
            strategy = self._strategies[key] = self.make_strategy(resource_type)
        return strategy

    def make_strategy(self, resource_type: ResourceType) -> RESTStrategy:
        """A new strategy for ``resource_type``: its compiled-in kind's (a server of other kinds overrides this)."""
        return self.builtin.strategy_for(resource_type)

    def now(self) -> str:
        """The clock as a metav1.Time string; formatted once per second (strftime costs as much as
        a tenth of a write, and timestamps have one-second resolution anyway). The system clock (`utc_now`)
        is read as `time.time()`: its second without building a datetime (registry/clock.py)."""
        clock = self.clock
        if clock is utc_now:
            second = int(time.time())
            if second != self._formatted_second:
                self._formatted_second = second
                self._formatted_time = format_time(datetime.fromtimestamp(second, UTC))
        else:
            moment = clock()
            second = math.floor(moment.timestamp())
            if second != self._formatted_second:
                self._formatted_second, self._formatted_time = second, format_time(moment)
        return self._formatted_time

    def storage_type(self, storage_key: str) -> ResourceType | None:
        """The endpoint of a resource's storage version (for internal writers such as the GC)."""
        versions = self.resources.versions_of(storage_key)
        for resource_type in versions:
            if resource_type.api_version == storage_api_version(resource_type):
                return resource_type
        return versions[0] if versions else None

    # --- reads --------------------------------------------------------------------------------------

    def _current(self, resource_type: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        obj = self.store.get(resource_type.storage_key, namespace, name)
        if obj is None:
            raise not_found(resource_type.plural, resource_type.group, name)
        return obj

    def get(self, resource_type: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        return served_as(self._current(resource_type, namespace, name), resource_type)

    def list(
        self,
        resource_type: ResourceType,
        namespace: str | None,
        labels: tuple[Requirement, ...],
        fields: tuple[FieldRequirement, ...],
        *,
        limit: int = 0,
        continue_token: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> dict[str, Any]:
        """One page of a collection, from the state the request's resourceVersion options name
        (`pyop.apiserver.registry.list_options`)."""
        read = list_read(resource_version, resource_version_match, limit, continue_token)
        limit = read.limit
        if continue_token:
            snapshot_id, snapshot, offset = self.store.resolve_continue(continue_token)
        else:
            current = self.store.resource_version
            wanted = read.exact_version if read.exact_version is not None else read.minimum_version
            if wanted > current:
                raise too_large(wanted, current)
            if read.exact_version is None or read.exact_version == current:
                version, candidates = current, self.store.objects(resource_type.storage_key, namespace)
            else:
                version = read.exact_version
                candidates = iter(self.store.objects_at(resource_type.storage_key, namespace, version))
            matching = [obj for obj in candidates if labels_match(labels, obj) and fields_match(fields, obj)]
            matching.sort(key=lambda obj: (obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
            snapshot_id, snapshot, offset = "", ListSnapshot(version, matching), 0
        end = offset + limit if limit > 0 else len(snapshot.items)
        page = snapshot.items[offset:end]
        metadata: dict[str, Any] = {"resourceVersion": str(snapshot.resource_version)}
        if end < len(snapshot.items):
            snapshot_id = snapshot_id or self.store.save_snapshot(snapshot)
            metadata["continue"] = self.store.encode_continue(snapshot_id, end, snapshot.resource_version)
            metadata["remainingItemCount"] = len(snapshot.items) - end
        return {
            "kind": resource_type.list_kind,
            "apiVersion": resource_type.api_version,
            "metadata": metadata,
            "items": [served_as(obj, resource_type) for obj in page],
        }

    def watch(
        self,
        resource_type: ResourceType,
        namespace: str | None,
        labels: tuple[Requirement, ...],
        fields: tuple[FieldRequirement, ...],
        *,
        resource_version: str,
        bookmarks: bool,
        timeout: float | None,
        send_initial_events: bool = False,
    ) -> Watcher:
        """Register a watch; its queue already holds the initial or replayed events."""
        watcher = Watcher(
            resource_type,
            namespace,
            labels,
            fields,
            bookmarks=bookmarks,
            bookmark_interval=self.bookmark_interval,
            timeout=timeout,
            current_rv=lambda: self.store.resource_version,
        )
        if resource_version in ("", "0"):
            for obj in self.store.objects(resource_type.storage_key, namespace):
                if labels_match(labels, obj) and fields_match(fields, obj):
                    watcher.send_initial("ADDED", obj)
            if send_initial_events and bookmarks:
                watcher.send_bookmark({INITIAL_EVENTS_END: "true"})
        else:
            try:
                start = int(resource_version)
            except ValueError:
                raise bad_request(f"invalid resourceVersion {resource_version!r}") from None
            if start < self.store.compacted_rv:
                watcher.send_error(expired(f"too old resource version: {start} ({self.store.compacted_rv + 1})"))
                return watcher
            for event in self.store.events_since(resource_type.storage_key, start):
                watcher.deliver(event)
        self.store.subscribe(resource_type.storage_key, watcher)
        self.watchers.add(watcher)
        return watcher

    def end_watch(self, watcher: Watcher) -> None:
        self.store.unsubscribe(watcher.resource_type.storage_key, watcher)
        self.watchers.discard(watcher)

    # --- create -------------------------------------------------------------------------------------

    def _check_identity(self, resource_type: ResourceType, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise bad_request("the request body must be a JSON object")
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if api_version == resource_type.api_version and kind == resource_type.kind and _in_wire_order(body):
            return body  # already what the code below would make of it (every patch of a stored object)
        if kind and kind != resource_type.kind:
            raise bad_request(
                f"the kind of the provided object ({kind}) does not match the resource {resource_type.kind}"
            )
        if api_version and api_version.split("/")[0] != (resource_type.group or "v1") and api_version != "v1":
            raise bad_request(f"the API version {api_version} does not match the resource {resource_type.api_version}")
        metadata = body.get("metadata")
        rest = {key: value for key, value in body.items() if key not in ("apiVersion", "kind", "metadata")}
        body.clear()
        body.update(apiVersion=resource_type.api_version, kind=resource_type.kind)
        body["metadata"] = metadata if isinstance(metadata, dict) else {}
        body.update(rest)
        return body

    def _check_namespace(self, resource_type: ResourceType, namespace: str, body: dict[str, Any]) -> None:
        metadata = body["metadata"]
        if not resource_type.namespaced:
            metadata.pop("namespace", None)
            return
        if metadata.get("namespace") and metadata["namespace"] != namespace:
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        metadata["namespace"] = namespace

    def _require_live_namespace(self, namespace: str, resource_type: ResourceType, name: str = "") -> None:
        """NamespaceLifecycle admission: no new objects in a namespace that is gone or being terminated (403
        Forbidden naming the object, with the `NamespaceTerminating` cause clients look for)."""
        state = namespace_state(self.store, namespace)
        if state == "missing":
            raise not_found("namespaces", "", namespace)
        if state == "terminating":
            resource = qualified(resource_type.plural, resource_type.group)
            subject = f'{resource} "{name}"' if name else resource
            raise ApiError(
                403,
                f"{subject} is forbidden: unable to create new content in namespace {namespace} "
                "because it is being terminated",
                name=name,
                group=resource_type.group,
                kind=resource_type.plural,
                causes=[
                    StatusCause(
                        "NamespaceTerminating", f"namespace {namespace} is being terminated", "metadata.namespace"
                    )
                ],
            )

    def _validate_name(self, resource_type: ResourceType, name: str, strategy: RESTStrategy) -> None:
        rule = strategy.name_rule
        if rule == "path-segment" and name and not path_segment_problems(name):
            return  # RBAC names are any path segment (ValidateRBACName): `system:discovery` is one
        if not name:
            raise invalid(
                resource_type.kind,
                resource_type.group,
                name,
                [
                    StatusCause(
                        "FieldValueRequired",
                        "Required value: name or generateName is required",
                        "metadata.name",
                    )
                ],
            )
        problems = (dns1123_label_problems if rule == "dns-label" else dns1123_subdomain_problems)(name)
        if problems:  # one cause per problem, as ValidateObjectMeta reports them
            causes = [
                StatusCause("FieldValueInvalid", f'Invalid value: "{name}": {problem}', "metadata.name")
                for problem in problems
            ]
            raise invalid(resource_type.kind, resource_type.group, name, causes)

    def create(
        self,
        resource_type: ResourceType,
        namespace: str,
        body: Any,
        options: WriteOptions,
        *,
        managed: managed_fields.Entries | None = None,
    ) -> dict[str, Any]:
        """``managed``: the managedFields of an apply that creates (else the creator is recorded as an Update)."""
        options.warnings.clear()  # a reused WriteOptions reports this write's warnings, not every earlier one
        obj = self._check_identity(resource_type, body)
        self._check_namespace(resource_type, namespace, obj)
        metadata = obj["metadata"]
        if resource_type.create_only:
            return self.strategy(resource_type).answer_create(namespace, obj, options.user, self)
        if metadata.get("resourceVersion"):
            raise ApiError(500, "resourceVersion should not be set on objects to be created", reason="InternalError")
        strategy = self.strategy(resource_type)
        strategy.check_create(self)
        admitting = self.admission_active and not strategy.exempt_from_admission
        obj = strategy.decode(obj, options.field_validation, options.warnings, None)
        metadata = obj["metadata"]
        plugins = self.plugins_for(CREATE, resource_type, "")
        if plugins.mutating:
            attributes = Attributes(
                CREATE,
                resource_type,
                "",
                namespace,
                metadata.get("name", ""),
                None,
                options.user,
                options.dry_run,
                options.warnings,
            )
            run_mutating(plugins.mutating, attributes, obj, self.store)
        if admitting:
            # Mutating admission sees the object as decoded (pruned and defaulted), before the name is generated.
            if resource_type.namespaced:
                self._require_live_namespace(namespace, resource_type, metadata.get("name", ""))
            obj = strategy.prune(obj, options.field_validation, options.warnings)
            mutated = suspend(self._point(MUTATING, "CREATE", resource_type, "", namespace, obj, None, options))
            obj = self._check_identity(resource_type, mutated)
            self._check_namespace(resource_type, namespace, obj)
            metadata = obj["metadata"]
        if not metadata.get("name") and metadata.get("generateName"):
            suffix = "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(5))
            metadata["name"] = metadata["generateName"] + suffix
        name = metadata.get("name", "")
        self._validate_name(resource_type, name, strategy)
        if resource_type.namespaced:
            self._require_live_namespace(namespace, resource_type, name)
        if self.store.get(resource_type.storage_key, namespace, name) is not None:
            raise already_exists(resource_type.plural, resource_type.group, name)
        sent_managed = metadata.get("managedFields")
        for key in (
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
            "selfLink",
        ):
            metadata.pop(key, None)
        metadata["uid"] = new_uid()  # str(uuid.uuid4()), made in batches (pyop/uids.py)
        now = self.now()  # one timestamp per write: creationTimestamp and the creator's managedFields time
        metadata["creationTimestamp"] = now
        if strategy.generation is not None:
            metadata["generation"] = 1
        else:
            metadata.pop("generation", None)
        strategy.prepare_for_create(obj, self)
        obj = self._admit(resource_type, strategy, obj, None, options)
        validating = self._validating(plugins, CREATE, resource_type, "", namespace, name, None, options, admitting)
        if validating is not None:
            run_validating(plugins.validating, validating, obj, self.store, last=False)
        if managed is None:
            managed = self.field_manager.created(resource_type, obj, sent_managed, manager=options.manager, time=now)
        if managed:
            obj["metadata"]["managedFields"] = managed
        if admitting:
            served = served_as(obj, resource_type)
            suspend(self._point(VALIDATING, "CREATE", resource_type, "", namespace, served, None, options))
            # The store may have moved on while the webhooks answered.
            if resource_type.namespaced:
                self._require_live_namespace(namespace, resource_type, name)
            if self.store.get(resource_type.storage_key, namespace, name) is not None:
                raise already_exists(resource_type.plural, resource_type.group, name)
        if validating is not None:
            run_validating(plugins.validating_last, validating, obj, self.store, last=True)
        obj = stored_as(obj, resource_type)  # encoded in the storage version (a CRD's conversion webhook)
        if options.dry_run:
            return served_as(obj, resource_type)
        self._commit(resource_type, "ADDED", obj, None)
        return served_as(obj, resource_type)

    def _point(
        self,
        phase: str,
        operation: str,
        resource_type: ResourceType,
        subresource: str,
        namespace: str,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
        options: WriteOptions,
        *,
        delete_options: dict[str, Any] | None = None,
        kind: tuple[str, str, str] | None = None,
    ) -> AdmissionPoint:
        source = obj if obj is not None else old or {}
        name = source.get("metadata", {}).get("name", "")
        if operation == "DELETE":
            extra = {key: value for key, value in (delete_options or {}).items() if key not in ("kind", "apiVersion")}
            request_options = operation_options("DeleteOptions", options.dry_run, **extra)
        else:
            request_options = operation_options(
                "CreateOptions" if operation == "CREATE" else "UpdateOptions", options.dry_run, options.field_manager
            )
        return AdmissionPoint(
            phase,
            operation,
            resource_type,
            subresource,
            namespace,
            name,
            obj,
            old,
            options.dry_run,
            options.user,
            request_options,
            kind,
        )

    def _validating(
        self,
        plugins: PluginChoice,
        operation: str,
        resource_type: ResourceType,
        subresource: str,
        namespace: str,
        name: str,
        old: dict[str, Any] | None,
        options: WriteOptions,
        admitting: bool,
    ) -> Attributes | None:
        """The attributes the compiled-in validating plugins see, or None while none may handle the request, or
        none has anything to check: the namespace holds none of the objects they consult (`PluginChoice.consults`;
        decided here only when no webhook runs before the last plugins, as one might create such an object)."""
        if not (plugins.validating or plugins.validating_last):
            return None
        consults = plugins.consults
        if consults is not None and not admitting:
            holds = self.store.holds
            for key in consults:
                if holds(key, namespace):
                    break
            else:
                return None
        return Attributes(
            operation, resource_type, subresource, namespace, name, old, options.user, options.dry_run, options.warnings
        )

    def _admit(
        self,
        resource_type: ResourceType,
        strategy: RESTStrategy,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        options: WriteOptions,
    ) -> dict[str, Any]:
        """The kind's validation (``strategy``: the kind's, which the caller has at hand)."""
        obj, causes = strategy.validate(obj, old, options.field_validation, options.warnings)
        if causes:
            raise invalid(resource_type.kind, resource_type.group, obj["metadata"].get("name", ""), causes)
        return obj

    # --- update / patch -----------------------------------------------------------------------------

    def update(
        self,
        resource_type: ResourceType,
        namespace: str,
        name: str,
        body: Any,
        options: WriteOptions,
        *,
        subresource: str = "",
    ) -> dict[str, Any]:
        options.warnings.clear()
        current = self._current(resource_type, namespace, name)
        obj = self._check_identity(resource_type, body)
        body_name = obj["metadata"].get("name")
        if body_name and body_name != name:
            raise bad_request(f"the name of the object ({body_name}) does not match the name on the URL ({name})")
        obj["metadata"]["name"] = name
        self._check_namespace(resource_type, namespace, obj)
        sent_uid = obj["metadata"].get("uid")
        if sent_uid and sent_uid != current["metadata"].get("uid"):
            raise conflict(
                resource_type.plural,
                resource_type.group,
                name,
                f"Precondition failed: UID in precondition: {sent_uid}, "
                f"UID in object meta: {current['metadata'].get('uid')}",
            )
        sent_rv = obj["metadata"].get("resourceVersion")
        if not sent_rv and not resource_type.allows_unconditional_update:
            raise invalid(
                resource_type.kind,
                resource_type.group,
                name,
                [
                    StatusCause(
                        "FieldValueInvalid",
                        "Invalid value: 0: must be specified for an update",
                        "metadata.resourceVersion",
                    )
                ],
            )
        return self._write(resource_type, current, obj, options, subresource=subresource, operation="Update")

    def patch(
        self,
        resource_type: ResourceType,
        namespace: str,
        name: str,
        patch_type: str,
        patch_body: Any,
        options: WriteOptions,
        *,
        subresource: str = "",
    ) -> tuple[dict[str, Any], bool]:
        """Returns the patched object and whether it was created (apply of a new object)."""
        options.warnings.clear()
        if patch_type == APPLY_PATCH:
            return self.apply(resource_type, namespace, name, patch_body, options, subresource=subresource)
        current = self._current(resource_type, namespace, name)
        served = served_as(current, resource_type)  # patches apply to the object in the request's version
        if patch_type == MERGE_PATCH:
            if not isinstance(patch_body, dict):
                raise bad_request("merge patch must be a JSON object")
            patched = merge_patch(served, patch_body)  # a new top level, and a new metadata if the patch has one
            metadata = patched.get("metadata")
            if metadata is served.get("metadata") and isinstance(metadata, dict):
                patched["metadata"] = dict(metadata)  # with _writable_copy's (the other patches') own copy below
        elif patch_type == JSON_PATCH:
            patched = json_patch(served, patch_body)
        elif patch_type == STRATEGIC_PATCH:
            if not self.strategy(resource_type).supports_strategic_merge:
                raise strategic_merge_unsupported()
            if not isinstance(patch_body, dict):
                raise bad_request("strategic merge patch must be a JSON object")
            patched = strategic_merge(served, patch_body)
        else:
            raise ApiError(415, f"unsupported patch type {patch_type!r}", reason="UnsupportedMediaType")
        if patch_type != MERGE_PATCH:
            patched = _writable_copy(patched)
        self._check_identity(resource_type, patched)
        patched["metadata"]["name"] = name
        return self._write(resource_type, current, patched, options, subresource=subresource, operation="Update"), False

    def apply(
        self,
        resource_type: ResourceType,
        namespace: str,
        name: str,
        config: Any,
        options: WriteOptions,
        *,
        subresource: str = "",
    ) -> tuple[dict[str, Any], bool]:
        """Server-side apply as create-or-merge, recording the applied fields under the field manager."""
        if not options.field_manager:
            raise managed_fields.field_manager_required()
        if not isinstance(config, dict) or not config.get("apiVersion") or not config.get("kind"):
            raise bad_request("apply patch must be an object with apiVersion and kind set")
        config_name = (config.get("metadata") or {}).get("name")
        if config_name and config_name != name:
            raise bad_request(f"the name of the object ({config_name}) does not match the name on the URL ({name})")
        current = self.store.get(resource_type.storage_key, namespace, name)
        if current is None:
            if subresource:
                raise not_found(resource_type.plural, resource_type.group, name)
            body, managed = self._apply_fields(resource_type, None, config, options, subresource)
            body.setdefault("metadata", {})["name"] = name
            created = self.create(resource_type, namespace, body, options, managed=managed)
            return created, True
        # The configuration is the registry's own, as every request body is (no defensive copy).
        config.setdefault("metadata", {}).pop("resourceVersion", None)
        served = served_as(current, resource_type)
        merged, managed = self._apply_fields(resource_type, served, config, options, subresource)
        merged = _writable_copy(merged)
        self._check_identity(resource_type, merged)
        updated = self._write(
            resource_type,
            current,
            merged,
            options,
            subresource=subresource,
            operation="Apply",
            managed=managed,
        )
        return updated, False

    def _apply_fields(
        self,
        resource_type: ResourceType,
        live: dict[str, Any] | None,
        config: dict[str, Any],
        options: WriteOptions,
        subresource: str,
    ) -> tuple[dict[str, Any], managed_fields.Entries]:
        """The configuration merged into ``live`` by the kind's schema, and the managers after it (409 on
        conflicts unless forced): structured-merge-diff, in managed_fields.py."""
        return self.field_manager.apply(
            resource_type,
            live,
            config,
            manager=options.field_manager,
            subresource=subresource,
            force=options.force,
            time=self.now(),
        )

    def _write(
        self,
        resource_type: ResourceType,
        current: dict[str, Any],
        new: dict[str, Any],
        options: WriteOptions,
        *,
        subresource: str,
        operation: str,
        managed: managed_fields.Entries | None = None,
        admitted: bool = True,
    ) -> dict[str, Any]:
        """The common tail of update, patch and apply on an existing object; ``admitted=False``: the server's own
        controllers' writes, which do not go through admission webhooks here."""
        current_meta = current["metadata"]
        name = current_meta["name"]
        current_rv = current_meta["resourceVersion"]
        sent_managed = new["metadata"].get("managedFields")  # an update's own managedFields replace the live ones
        served = served_as(current, resource_type)  # the stored object in the request's version
        strategy = self.strategy(resource_type)
        # The scale subresource admits Scale objects (in update_scale), not the object behind them.
        admitting = self.admission_active and admitted and subresource != "scale" and not strategy.exempt_from_admission
        if admitted and subresource != "scale":
            new = strategy.decode(new, options.field_validation, options.warnings, current)
        if admitting:
            namespace = current_meta.get("namespace", "")
            new = strategy.prune(new, options.field_validation, options.warnings)
            mutated = suspend(
                self._point(MUTATING, "UPDATE", resource_type, subresource, namespace, new, served, options)
            )
            new = self._check_identity(resource_type, mutated)
            new["metadata"]["name"] = name
        sent_rv = new["metadata"].get("resourceVersion")
        if sent_rv and sent_rv != current_rv:
            raise conflict(resource_type.plural, resource_type.group, name, STALE_OBJECT)
        own = strategy.subresource_strategy(subresource) if subresource else None
        if own is not None:  # the kind's own subresource strategy: what it keeps of the request, the rest reset
            new = own.prepare_for_update(new, served, self)
        elif subresource == "status":
            status = new.get("status")
            new = _writable_copy(served)
            if status is None:
                new.pop("status", None)
            else:
                new["status"] = status
        elif resource_type.has_status:
            if "status" in served:
                new["status"] = served["status"]
            else:
                new.pop("status", None)
        metadata = new["metadata"]
        for key in _SERVER_METADATA:
            if key in current_meta:
                metadata[key] = current_meta[key]
            else:
                metadata.pop(key, None)
        if resource_type.namespaced:
            metadata["namespace"] = current_meta.get("namespace", "")
        else:
            metadata.pop("namespace", None)
        metadata["managedFields"] = current_meta.get("managedFields", [])
        metadata["resourceVersion"] = current_rv
        strategy.prepare_for_update(new, current, self)
        new = self._admit(resource_type, strategy, new, served, options)
        if own is not None:
            causes = own.validate_update(new, served)
            if causes:
                raise invalid(resource_type.kind, resource_type.group, name, causes)
        metadata = new["metadata"]  # admission returns a new document
        validating = None
        if admitted:
            plugins = self.plugins_for(UPDATE, resource_type, subresource)
            validating = self._validating(
                plugins,
                UPDATE,
                resource_type,
                subresource,
                metadata.get("namespace", ""),
                name,
                served,
                options,
                admitting,
            )
        if validating is not None:
            run_validating(plugins.validating, validating, new, self.store, last=False)
        if current_meta.get("deletionTimestamp"):  # _is_being_deleted(current)
            added = set(metadata.get("finalizers") or []) - set(current_meta.get("finalizers") or [])
            if added:
                raise invalid(
                    resource_type.kind,
                    resource_type.group,
                    name,
                    [
                        StatusCause(
                            "FieldValueForbidden",
                            "Forbidden: no new finalizers can be added if the object is being deleted, "
                            f"found new finalizers {sorted(added)!r}",
                            "metadata.finalizers",
                        )
                    ],
                )
        rule = strategy.generation
        bumped = False  # a new generation: the write changes the object (no need to compare it for a no-op)
        if rule is not None and "generation" in current_meta:
            bumped = desired_state_changed(rule, new, served, has_status=resource_type.has_status)
            if bumped:
                metadata["generation"] = current_meta["generation"] + 1
        if admitting:
            suspend(self._point(VALIDATING, "UPDATE", resource_type, subresource, namespace, new, served, options))
            if self.store.get(resource_type.storage_key, namespace, name) is not current:
                raise Stale(name)
        if validating is not None:
            run_validating(plugins.validating_last, validating, new, self.store, last=True)
        new = stored_as(new, resource_type)  # encoded in the storage version (a CRD's conversion webhook)
        unchanged = _unchanged(current, new, bumped)  # recording managedFields below changes neither view
        live_managed = current_meta.get("managedFields")
        if unchanged and managed is None and (sent_managed is live_managed or sent_managed == live_managed):
            return served
        if managed is None:
            now = self.now()
            managed = self.field_manager.updated(
                resource_type, current, new, sent_managed, manager=options.manager, subresource=subresource, time=now
            )
        if managed:
            new["metadata"]["managedFields"] = managed
        else:
            new["metadata"].pop("managedFields", None)
        if unchanged and new["metadata"].get("managedFields") == live_managed:
            return served_as(current, resource_type)
        if options.dry_run:
            return served_as(new, resource_type)
        if _is_being_deleted(new) and not strategy.finalizers_remain(new):
            self._commit(resource_type, "DELETED", new, current)
        else:
            self._commit(resource_type, "MODIFIED", new, current)
        return served_as(new, resource_type)

    # --- scale subresource --------------------------------------------------------------------------

    def get_scale(self, resource_type: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        if resource_type.scale is None:
            raise ApiError(404, "the server could not find the requested resource")
        obj = self._current(resource_type, namespace, name)
        scale = resource_type.scale
        metadata = {
            key: obj["metadata"][key]
            for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if key in obj["metadata"]
        }
        status: dict[str, Any] = {"replicas": _get_path(obj, scale.status_replicas_path) or 0}
        if scale.label_selector_path:
            selector = _get_path(obj, scale.label_selector_path)
            if scale.selector_is_map:
                selector = selector_from_label_selector({"matchLabels": selector or {}})
            elif scale.selector_is_struct:
                selector = selector_from_label_selector(selector)
            if selector:
                status["selector"] = selector
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": metadata,
            "spec": {"replicas": _get_path(obj, scale.spec_replicas_path) or 0},
            "status": status,
        }

    def update_scale(
        self, resource_type: ResourceType, namespace: str, name: str, scale_body: Any, options: WriteOptions
    ) -> dict[str, Any]:
        if resource_type.scale is None:
            raise ApiError(404, "the server could not find the requested resource")
        if not isinstance(scale_body, dict):
            raise bad_request("the request body must be a Scale object")
        current = self._current(resource_type, namespace, name)
        if self.admission_active:
            scale_body = self._admit_scale(resource_type, namespace, name, scale_body, current, options)
        replicas = (scale_body.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise invalid(
                "Scale",
                "autoscaling",
                name,
                [
                    StatusCause(
                        "FieldValueInvalid",
                        f"Invalid value: {replicas!r}: must be greater than or equal to 0",
                        "spec.replicas",
                    )
                ],
            )
        new = clone_json(current)
        new["metadata"]["resourceVersion"] = (scale_body.get("metadata") or {}).get("resourceVersion", "")
        _set_path(new, resource_type.scale.spec_replicas_path, replicas)
        self._write(resource_type, current, new, options, subresource="scale", operation="Update")
        return self.get_scale(resource_type, namespace, name) if not options.dry_run else scale_body

    def _admit_scale(
        self,
        resource_type: ResourceType,
        namespace: str,
        name: str,
        scale_body: dict[str, Any],
        current: dict[str, Any],
        options: WriteOptions,
    ) -> dict[str, Any]:
        """Webhooks on `<resource>/scale` see autoscaling/v1 Scale objects, as kube-apiserver sends them."""
        old_scale = self.get_scale(resource_type, namespace, name)
        scale_body = {
            **scale_body,
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {**old_scale["metadata"], **(scale_body.get("metadata") or {})},
        }
        scale_kind = ("autoscaling", "v1", "Scale")
        mutated = suspend(
            self._point(
                MUTATING, "UPDATE", resource_type, "scale", namespace, scale_body, old_scale, options, kind=scale_kind
            )
        )
        scale_body = mutated if isinstance(mutated, dict) else scale_body
        suspend(
            self._point(
                VALIDATING, "UPDATE", resource_type, "scale", namespace, scale_body, old_scale, options, kind=scale_kind
            )
        )
        if self.store.get(resource_type.storage_key, namespace, name) is not current:
            raise Stale(name)
        return scale_body

    def patch_scale(
        self,
        resource_type: ResourceType,
        namespace: str,
        name: str,
        patch_type: str,
        patch_body: Any,
        options: WriteOptions,
    ) -> dict[str, Any]:
        scale = self.get_scale(resource_type, namespace, name)
        if patch_type == JSON_PATCH:
            patched = json_patch(scale, patch_body)
        elif isinstance(patch_body, dict):
            patched = merge_patch(scale, patch_body)
        else:
            raise bad_request("scale patch must be a JSON object")
        return self.update_scale(resource_type, namespace, name, patched, options)

    # --- delete -------------------------------------------------------------------------------------

    def delete(
        self,
        resource_type: ResourceType,
        namespace: str,
        name: str,
        delete_options: dict[str, Any],
        options: WriteOptions,
    ) -> tuple[dict[str, Any], bool]:
        """Returns the object and whether it is gone (False: deletion waits for finalizers)."""
        current = self._current(resource_type, namespace, name)
        preconditions = delete_options.get("preconditions") or {}
        meta = current["metadata"]
        if preconditions.get("uid") and preconditions["uid"] != meta.get("uid"):
            raise conflict(
                resource_type.plural,
                resource_type.group,
                name,
                f"Precondition failed: UID in precondition: {preconditions['uid']}, "
                f"UID in object meta: {meta.get('uid')}",
            )
        if preconditions.get("resourceVersion") and preconditions["resourceVersion"] != meta.get("resourceVersion"):
            raise conflict(
                resource_type.plural,
                resource_type.group,
                name,
                "Precondition failed: ResourceVersion in precondition: "
                f"{preconditions['resourceVersion']}, "
                f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
            )
        policy = delete_options.get("propagationPolicy") or (
            "Orphan" if delete_options.get("orphanDependents") else "Background"
        )
        if policy not in ("Orphan", "Background", "Foreground"):
            raise bad_request(f'propagationPolicy: Unsupported value: "{policy}"')
        strategy = self.strategy(resource_type)
        if self.admission_active and not strategy.exempt_from_admission:
            # DELETE is admitted with the object being deleted as oldObject and no object, in both phases.
            old = served_as(current, resource_type)
            for phase in (MUTATING, VALIDATING):
                suspend(
                    self._point(
                        phase, "DELETE", resource_type, "", namespace, None, old, options, delete_options=delete_options
                    )
                )
            if self.store.get(resource_type.storage_key, namespace, name) is not current:
                raise Stale(name)
        if _is_being_deleted(current):
            return served_as(current, resource_type), False
        if policy == "Orphan" and not options.dry_run:
            self.orphan_dependents(meta["uid"])
            current = self._current(resource_type, namespace, name)
        new = clone_json(current)
        new_meta = new["metadata"]
        if policy == "Foreground" and self.store.dependents_of(meta["uid"]):
            new_meta["finalizers"] = [*(new_meta.get("finalizers") or []), FOREGROUND_FINALIZER]
        strategy.prepare_for_delete(new)
        if not strategy.finalizers_remain(new):
            if options.dry_run:
                return served_as(current, resource_type), True
            self._commit(resource_type, "DELETED", new, current)
            return served_as(new, resource_type), True
        new_meta["deletionTimestamp"] = self.now()
        new_meta["deletionGracePeriodSeconds"] = 0
        if new_meta.get("generation", 0) > 0:  # rest.BeforeDelete: only kinds that have a generation
            new_meta["generation"] += 1
        strategy.deleting(new, current, self)
        if options.dry_run:
            return served_as(new, resource_type), False
        self._commit(resource_type, "MODIFIED", new, current)
        return served_as(new, resource_type), False

    def delete_collection(
        self,
        resource_type: ResourceType,
        namespace: str | None,
        labels: tuple[Requirement, ...],
        fields: tuple[FieldRequirement, ...],
        delete_options: dict[str, Any],
        options: WriteOptions,
    ) -> dict[str, Any]:
        doomed = [
            obj
            for obj in self.store.objects(resource_type.storage_key, namespace)
            if labels_match(labels, obj) and fields_match(fields, obj)
        ]
        items = []
        for obj in doomed:
            meta = obj["metadata"]
            try:
                deleted, _ = self.delete(
                    resource_type, meta.get("namespace", ""), meta["name"], delete_options, options
                )
            except ApiError as error:
                if error.code == 404:  # deleted by someone else while webhooks answered: kube ignores it too
                    continue
                raise
            items.append(deleted)
        return {
            "kind": resource_type.list_kind,
            "apiVersion": resource_type.api_version,
            "metadata": {"resourceVersion": str(self.store.resource_version)},
            "items": items,
        }

    # --- internal writers (garbage collector, namespace controller) ---------------------------------

    def orphan_dependents(self, owner_uid: str) -> None:
        for storage_key, namespace, name in self.store.dependents_of(owner_uid):
            self.remove_owner_reference(storage_key, namespace, name, owner_uid)

    def remove_owner_reference(self, storage_key: str, namespace: str, name: str, owner_uid: str) -> None:
        def drop_reference(obj: dict[str, Any]) -> None:
            refs = [ref for ref in obj["metadata"].get("ownerReferences") or [] if ref.get("uid") != owner_uid]
            if refs:
                obj["metadata"]["ownerReferences"] = refs
            else:
                obj["metadata"].pop("ownerReferences", None)

        self.mutate(storage_key, namespace, name, drop_reference, manager="garbage-collector")

    def remove_finalizer(self, storage_key: str, namespace: str, name: str, finalizer: str, *, manager: str) -> None:
        resource_type = self.storage_type(storage_key)
        if resource_type is None:
            return
        strategy = self.strategy(resource_type)

        def drop_finalizer(obj: dict[str, Any]) -> None:
            strategy.remove_finalizer(obj, finalizer)

        self.mutate(storage_key, namespace, name, drop_finalizer, manager=manager)

    def mutate(
        self,
        storage_key: str,
        namespace: str,
        name: str,
        change: Callable[[dict[str, Any]], None],
        *,
        manager: str,
    ) -> None:
        """Read-modify-write of an object by a server-side controller; a vanished object is fine."""
        resource_type = self.storage_type(storage_key)
        current = self.store.get(storage_key, namespace, name)
        if resource_type is None or current is None:
            return
        new = clone_json(current)
        change(new)
        self._write(
            resource_type,
            current,
            new,
            WriteOptions(field_manager=manager),
            subresource="",
            operation="Update",
            admitted=False,
        )

    def remove_all(self, resource_type: ResourceType) -> None:
        """Delete every object of a resource regardless of finalizers (its CRD is gone)."""
        for obj in self.store.drop_resource(resource_type.storage_key):
            self._commit(resource_type, "DELETED", clone_json(obj), obj)

    def _commit(
        self, resource_type: ResourceType, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None
    ) -> None:
        self.store.commit(resource_type.storage_key, event_type, obj, prev)
        if event_type == "DELETED":
            for gone in (obj, prev):
                if gone is not None:
                    self.field_manager.forget(gone["metadata"].get("managedFields"))
        if self.on_commit is not None:
            self.on_commit(resource_type, event_type, obj, prev)
