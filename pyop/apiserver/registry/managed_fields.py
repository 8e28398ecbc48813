"""``metadata.managedFields`` in the test API server: kube-apiserver's field manager over
``pyop.api.managedfields`` (structured-merge-diff semantics).

The registry (operations.py) calls three hooks: ``created`` / ``updated`` after a create or an update-like write
(Update operation: the writer owns what it changed), and ``apply`` for server-side apply (merge by schema, field
removal, conflicts, force). Each returns the new managedFields list or the merged object; errors are ApiErrors as
kube-apiserver answers them.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from pyop.api import managedfields as mf
from pyop.api.status import ApiError, StatusCause, bad_request, invalid
from pyop.apiserver.registry.resources import ResourceType

_CONFLICT_CAUSE = "FieldManagerConflict"
_BEFORE_FIRST_APPLY = "before-first-apply"
Entries = list[Mapping[str, Any]]  # a managedFields list, as stored (entries shared between versions)
_DECODED_CACHE_SIZE = 65536
_STATUS_ONLY = mf.Scope(keep=frozenset({"f:status"}))
_ALL_BUT_STATUS = mf.Scope(drop=frozenset({"f:status"}))
_EVERYTHING = mf.Scope()


class FieldManager:
    """Per-kind schemas (cached) and the field manager's hooks, for one Kubernetes version."""

    def __init__(self, kubernetes_version: str, definition_of: Any) -> None:
        self.kubernetes_version = kubernetes_version
        self._definition_of = definition_of  # ResourceType -> OpenAPI definition name ("" for CRs)
        self._schemas: dict[tuple[str, str, int], mf.Type] = {}
        self._existing: dict[tuple[str, str, int], frozenset[str]] = {}  # the skeleton's fields, per schema
        # Stored managedFields lists decoded, by identity (they are never changed in place and are shared by
        # every version that did not change them); the list itself is kept so that its id stays its own. An
        # OrderedDict, oldest first: evicting from the front of a plain dict (``next(iter(d))``) scans the
        # deleted slots left there since its last resize (21 us a remember once the cache was full, against
        # 3.6 us). A deleted object's entry leaves at once (``forget``).
        self._decoded: OrderedDict[int, tuple[Any, mf.Managers]] = OrderedDict()

    def schema(self, resource_type: ResourceType) -> mf.Type:
        key = (resource_type.storage_key, resource_type.version, id(resource_type.schema))
        found = self._schemas.get(key)
        if found is None:
            if resource_type.custom:
                found = mf.custom_resource_type(resource_type.schema, self.kubernetes_version)
            else:
                found = mf.builtin_type(self._definition_of(resource_type), self.kubernetes_version)
            self._schemas[key] = found
        return found

    @staticmethod
    def scope(resource_type: ResourceType, subresource: str) -> mf.Scope:
        """The fields a write may own: a strategy resets status on the main resource and all but status on
        ``/status`` (GetResetFields)."""
        if subresource == "status":
            return _STATUS_ONLY
        if subresource:  # scale: its replicas are recorded at their path in the object, as kube-apiserver does
            return _EVERYTHING
        return _ALL_BUT_STATUS if resource_type.has_status else _EVERYTHING

    def _skeleton(self, resource_type: ResourceType) -> dict[str, Any]:
        """What a create compares against: the kind's empty object (a built-in's struct fields exist, so they
        are not owned as a whole; a custom resource starts from nothing)."""
        if resource_type.custom:
            return {}
        fields = self.schema(resource_type).fields
        return {name: {} for name in ("metadata", "spec", "status") if name in fields}

    def _existing_fields(self, resource_type: ResourceType) -> frozenset[str]:
        """The top-level fields of the kind's empty object (``_skeleton``), remembered per schema as ``schema``."""
        key = (resource_type.storage_key, resource_type.version, id(resource_type.schema))
        found = self._existing.get(key)
        if found is None:
            found = self._existing[key] = frozenset(self._skeleton(resource_type))
        return found

    def created(
        self,
        resource_type: ResourceType,
        obj: dict[str, Any],
        sent: Any,
        *,
        manager: str,
        time: str,
    ) -> Entries:
        """managedFields of an object created by an Update-operation write (POST)."""
        managers = _decoded_or_empty(sent)
        writer = mf.Manager(manager, mf.UPDATE, resource_type.api_version, {}, "", time)
        result = mf.create(
            obj,
            self.schema(resource_type),
            managers,
            writer,
            self.scope(resource_type, ""),
            existing=self._existing_fields(resource_type),
        )
        return self._encoded(result)

    def _stored_managers(self, entries: Any) -> mf.Managers:
        """The managers of a stored object (not to be changed: the result is shared)."""
        if not entries:
            return {}
        cached = self._decoded.pop(id(entries), None)  # the write replaces the list: one entry per object
        if cached is not None and cached[0] is entries:
            return cached[1]
        managers = _decoded_or_empty(entries, trusted=True)
        self._remember(entries, managers)
        return managers

    def _encoded(self, managers: mf.Managers, live: Any = None) -> Entries:
        """The managedFields list of ``managers``, remembered as decoded (the next write starts from it);
        ``live`` itself when it holds the very same entries (nothing to store anew)."""
        entries, decoded = mf.encode_with_managers(managers)
        same_length = isinstance(live, list) and len(live) == len(entries)
        if same_length and all(map(operator.is_, live, entries)):  # the lengths are equal: no entry left out
            entries = live
        if entries:
            self._remember(entries, decoded)
        return entries

    def _remember(self, entries: Any, managers: mf.Managers) -> None:
        cache = self._decoded
        if len(cache) >= _DECODED_CACHE_SIZE:
            cache.popitem(last=False)  # the oldest: most objects are written again soon or not at all
        cache[id(entries)] = (entries, managers)

    def forget(self, entries: Any) -> None:
        """A deleted object's managedFields leave the cache (else they stay until evicted, and create/delete churn
        fills it with the dead)."""
        cached = self._decoded.get(id(entries))
        if cached is not None and cached[0] is entries:
            del self._decoded[id(entries)]

    def updated(
        self,
        resource_type: ResourceType,
        current: dict[str, Any],
        new: dict[str, Any],
        sent: Any,
        *,
        manager: str,
        subresource: str,
        time: str,
    ) -> Entries:
        """managedFields after an update or non-apply patch: the body's managedFields replace the live ones when
        they decode (and are not empty; ``[{}]`` clears them), except on a subresource."""
        live = current["metadata"].get("managedFields")
        if subresource or sent is live or sent == live:
            managers = self._stored_managers(live)
        elif mf.is_reset(sent):
            managers = {}
        else:
            try:
                managers = mf.decode(sent)
            except mf.InvalidManagedFields:
                managers = {}
            if not managers:
                managers = self._stored_managers(live)
        writer = mf.Manager(manager, mf.UPDATE, resource_type.api_version, {}, subresource, time)
        result = mf.update(
            current, new, self.schema(resource_type), managers, writer, self.scope(resource_type, subresource)
        )
        return self._encoded(result, live)

    def apply(
        self,
        resource_type: ResourceType,
        live: dict[str, Any] | None,
        config: dict[str, Any],
        *,
        manager: str,
        subresource: str,
        force: bool,
        time: str,
    ) -> tuple[dict[str, Any], Entries]:
        """The object after applying ``config`` (to ``live``; None: apply creates) and its managedFields."""
        if (config.get("metadata") or {}).get("managedFields") is not None:
            raise bad_request("metadata.managedFields must be nil")
        if config.get("apiVersion") != resource_type.api_version:
            raise bad_request(
                "Incorrect version specified in apply patch. "
                f"Specified patch version: {config.get('apiVersion')}, expected: {resource_type.api_version}"
            )
        schema = self.schema(resource_type)
        start = live if live is not None else self._skeleton(resource_type)
        managers = self._stored_managers(start["metadata"].get("managedFields")) if live is not None else {}
        if live is not None and not managers:
            # An object nobody owns anything of (its managedFields reset): its fields so far belong to
            # "before-first-apply", as kube-apiserver's skipNonAppliedManager records them.
            first = mf.Manager(_BEFORE_FIRST_APPLY, mf.UPDATE, resource_type.api_version, {}, "", time)
            existing = self._existing_fields(resource_type)
            managers = mf.create(live, schema, {}, first, self.scope(resource_type, ""), existing=existing)
        applier = mf.Manager(manager, mf.APPLY, resource_type.api_version, {}, subresource, time)
        try:
            merged, result = mf.apply(
                start, config, schema, managers, applier, force=force, scope=self.scope(resource_type, subresource)
            )
        except mf.ApplyConflict as error:
            raise conflict_error(error) from None
        except mf.SchemaError as error:
            raise ApiError(
                500,
                f"failed to create typed patch object ({_identity(resource_type, config)}): {error}",
                reason="InternalError",
            ) from None
        if live is None:
            merged = config  # merged into nothing: the configuration itself (the skeleton only shaped the fields)
        return merged, self._encoded(result, live["metadata"].get("managedFields") if live is not None else None)


def _identity(resource_type: ResourceType, config: dict[str, Any]) -> str:
    metadata = config.get("metadata") or {}
    name = "/".join(part for part in (metadata.get("namespace", ""), metadata.get("name", "")) if part)
    return f"{name}; {resource_type.api_version}, Kind={resource_type.kind}"


def _decoded_or_empty(entries: Any, *, trusted: bool = False) -> mf.Managers:
    """``trusted``: entries this server stored (their field sets are not validated again)."""
    try:
        return mf.decode(entries, validate_fields=not trusted)
    except mf.InvalidManagedFields:
        return {}


def conflict_error(error: mf.ApplyConflict) -> ApiError:
    """409 Conflict with one FieldManagerConflict cause per field, as NewApplyConflict builds it."""
    causes = [StatusCause(_CONFLICT_CAUSE, conflict.message, conflict.field) for conflict in error.conflicts]
    return ApiError(409, error.summary(), reason="Conflict", causes=causes)


def field_manager_required() -> ApiError:
    """An apply without ``fieldManager``: ValidatePatchOptions' 422 on PatchOptions."""
    cause = StatusCause("FieldValueRequired", "Required value: is required for apply patch", "fieldManager")
    return invalid("PatchOptions", "meta.k8s.io", "", [cause])
