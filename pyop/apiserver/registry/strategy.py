"""Per-kind strategies: what the generic registry asks a kind, as k8s.io/apiserver's RESTCreateStrategy,
RESTUpdateStrategy and RESTDeleteStrategy.

The registry (`operations.Operations`) owns what every kind gets: identity and name checks, resourceVersion
preconditions, server-set metadata, status and spec kept apart by the status subresource, finalizers and deletion,
managed fields, admission points, dry run. Everything that differs between kinds is a question to the kind's
strategy, never a test of its storage key: its decoding and defaulting, what it sets on create (a status reset,
phases, allocated IPs), what it checks and carries over on update, its validation, whether it has
``metadata.generation`` and what bumps it, what deletion does to it, and the rules for its names.

`Strategy` answers every question as a plain kind with no behaviour of its own; kinds subclass it. The test API
server's built-in kinds are strategies in `pyop.testing.builtins.strategies`, custom resources get the schema
strategy (`registry.schema`), an aggregated server's kinds the user's typed strategy through an adapter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from pyop.api.status import ApiError, StatusCause
from pyop.apiserver.endpoints.printing import Column, Row
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.storage.store import Store

NameRule = Literal["dns-subdomain", "dns-label", "path-segment"]
# The `fieldValidation` query parameter: what a decoder does with unknown or duplicate fields.
FIELD_VALIDATION_MODES: Final = ("Ignore", "Warn", "Strict")
DEFAULT_FIELD_VALIDATION: Final = "Warn"  # kube-apiserver's default when the query parameter is absent


@dataclass(frozen=True)
class Generation:
    """A kind's `metadata.generation` rule: set to 1 on create, bumped when its desired state changes."""

    metadata_fields: tuple[str, ...] = ()  # metadata that bumps it too (Deployment: annotations)
    since: tuple[int, int] = (1, 0)  # the first Kubernetes minor release whose strategy sets it


_SKIPPED: Final = ("metadata", "apiVersion", "kind")
_SKIPPED_WITH_STATUS: Final = ("metadata", "apiVersion", "kind", "status")


def desired_state(rule: Generation, obj: dict[str, Any], *, has_status: bool) -> dict[str, Any]:
    """What a generation bump watches: everything but metadata (and status when it is a subresource)."""
    skipped = _SKIPPED_WITH_STATUS if has_status else _SKIPPED
    view = {key: value for key, value in obj.items() if key not in skipped}
    if rule.metadata_fields:
        metadata = obj.get("metadata") or {}
        view["metadata"] = {key: metadata.get(key) for key in rule.metadata_fields}
    return view


def desired_state_changed(rule: Generation, new: dict[str, Any], old: dict[str, Any], *, has_status: bool) -> bool:
    """``desired_state(rule, new) != desired_state(rule, old)``, compared in place (every update asks, and
    building the two views cost more than comparing them; shared subtrees are equal by identity, as dict
    equality finds them)."""
    skipped = _SKIPPED_WITH_STATUS if has_status else _SKIPPED
    compared = 0
    for key, value in new.items():
        if key in skipped:
            continue
        other = old.get(key, _ABSENT)
        if other is not value and (other is _ABSENT or other != value):
            return True
        compared += 1
    # Every compared key of ``new`` is in ``old``: ``old`` has another (a removed field) iff it has more keys than
    # those and the skipped ones it holds (counted over the 3-4 skipped names, not over old's keys).
    held = 0
    for key in skipped:
        if key in old:
            held += 1
    if compared != len(old) - held:
        return True
    if rule.metadata_fields:
        new_metadata, old_metadata = new.get("metadata") or {}, old.get("metadata") or {}
        for key in rule.metadata_fields:
            value, other = new_metadata.get(key), old_metadata.get(key)
            if other is not value and other != value:
                return True
    return False


_ABSENT: Final = object()


class RegistryContext(Protocol):
    """What a strategy may read from the registry it runs in: the stored objects and the clock."""

    store: Store

    def now(self) -> str: ...


class RESTStrategy(Protocol):
    """The questions the registry asks a kind (see the module docstring); `Strategy` is the plain answer."""

    resource_type: ResourceType
    generation: Generation | None
    printer: tuple[list[Column], Row] | None
    exempt_from_admission: bool
    supports_strategic_merge: bool
    name_rule: NameRule

    def check_create(self, ctx: RegistryContext) -> None: ...

    def answer_create(self, namespace: str, obj: dict[str, Any], user: Any, ctx: RegistryContext) -> dict[str, Any]: ...

    def decode(
        self, obj: dict[str, Any], field_validation: str, warnings: list[str], old: dict[str, Any] | None
    ) -> dict[str, Any]: ...

    def prune(self, obj: dict[str, Any], field_validation: str, warnings: list[str]) -> dict[str, Any]: ...

    def prepare_for_create(self, obj: dict[str, Any], ctx: RegistryContext) -> None: ...

    def prepare_for_update(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None: ...

    def validate(
        self, obj: dict[str, Any], old: dict[str, Any] | None, field_validation: str, warnings: list[str]
    ) -> tuple[dict[str, Any], list[StatusCause]]: ...

    def prepare_for_delete(self, obj: dict[str, Any]) -> None: ...

    def deleting(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None: ...

    def finalizers_remain(self, obj: dict[str, Any]) -> bool: ...

    def remove_finalizer(self, obj: dict[str, Any], finalizer: str) -> None: ...

    def subresource_strategy(self, subresource: str) -> SubresourceStrategy | None: ...


class SubresourceStrategy(Protocol):
    """An update of one subresource that keeps a few fields of the request and resets everything else from the
    stored object: kube's per-subresource strategies (a pod's podEphemeralContainersStrategy, a CSR's
    csrApprovalStrategy), their PrepareForUpdate and ValidateUpdate. The registry asks the kind's strategy for one
    on every update and patch of a subresource (`status` included: a kind may replace the registry's own split of
    spec and status); the kind's `prepare_for_update` and `validate` still run after it."""

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> dict[str, Any]:
        """The object to write: ``old`` (the stored object, served) with what this subresource may change taken
        from ``new`` (the request, decoded and defaulted). Neither argument is changed."""
        ...

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[StatusCause]:
        """What kube's ValidateUpdate of this subresource refuses, with its field paths."""
        ...


class Strategy:
    """A kind with no behaviour of its own: no generation, stored as sent, validated by nobody but the registry."""

    generation: Generation | None = None
    printer: tuple[list[Column], Row] | None = None  # Table output: the kind's columns and row (None: Name, Age)
    exempt_from_admission = False  # never sent to admission webhooks (their own configurations)
    supports_strategic_merge = True  # custom resources have no patch merge keys: kube answers 415
    name_rule: NameRule = "dns-subdomain"

    def __init__(self, resource_type: ResourceType) -> None:
        self.resource_type = resource_type

    def check_create(self, ctx: RegistryContext) -> None:
        """Refuse a create before anything is decoded (a custom resource whose CRD is being deleted)."""

    def answer_create(self, namespace: str, obj: dict[str, Any], user: Any, ctx: RegistryContext) -> dict[str, Any]:
        """The answer of a create-only kind (a review: answered, never stored); ``user``: who asks."""
        raise ApiError(405, "the server does not allow this method on the requested resource")

    def decode(
        self, obj: dict[str, Any], field_validation: str, warnings: list[str], old: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The body as the kind's decoder reads it, defaulted (every write; ``old``: what an update started from)."""
        return obj

    def prune(self, obj: dict[str, Any], field_validation: str, warnings: list[str]) -> dict[str, Any]:
        """The object as mutating admission sees it (a custom resource pruned and defaulted by its schema)."""
        return obj

    def prepare_for_create(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        """Set what the kind's strategy sets on a new object (after the registry's metadata): status resets,
        phases, server-allocated fields."""
        if self.resource_type.has_status:
            obj.pop("status", None)

    def prepare_for_update(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None:
        """Carry over or recompute what the kind owns on an update (after the registry kept status apart)."""

    def validate(
        self, obj: dict[str, Any], old: dict[str, Any] | None, field_validation: str, warnings: list[str]
    ) -> tuple[dict[str, Any], list[StatusCause]]:
        """The object to store (validation may prune or default, as a schema does) and what is wrong with it;
        ``old``: the stored object of an update, None on create."""
        return obj, []

    def prepare_for_delete(self, obj: dict[str, Any]) -> None:
        """A delete is about to mark or remove ``obj``: add the finalizers the kind's REST storage adds."""

    def deleting(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None:
        """``obj`` has just been marked for deletion (deletionTimestamp set): a phase, a condition."""

    def finalizers_remain(self, obj: dict[str, Any]) -> bool:
        """Whether something still holds the object (a Namespace also has `spec.finalizers`)."""
        return bool(obj["metadata"].get("finalizers"))

    def subresource_strategy(self, subresource: str) -> SubresourceStrategy | None:
        """The update strategy of one of the kind's subresources, None for the registry's own (status, scale)."""
        return None

    def remove_finalizer(self, obj: dict[str, Any], finalizer: str) -> None:
        remaining = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
        if remaining:
            obj["metadata"]["finalizers"] = remaining
        else:
            obj["metadata"].pop("finalizers", None)


def strategic_merge_unsupported() -> ApiError:
    """kube-apiserver's answer to a strategic merge patch of a kind that has no patch merge keys."""
    return ApiError(
        415,
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        reason="UnsupportedMediaType",
    )


__all__ = [
    "DEFAULT_FIELD_VALIDATION",
    "FIELD_VALIDATION_MODES",
    "Generation",
    "NameRule",
    "RESTStrategy",
    "RegistryContext",
    "Strategy",
    "SubresourceStrategy",
    "desired_state",
    "desired_state_changed",
    "strategic_merge_unsupported",
]
