"""Owner references: garbage collection of what a controller creates, and `owns()` watches back to the owner.

controller-runtime's `controllerutil.SetControllerReference` / `SetOwnerReference` rules: a reference is
identified by the owner's API group, kind and name (not version), so setting it again updates it in place; an
object has at most one controller, and setting a second one is refused; a namespaced owner must be in the
object's namespace, and a cluster-scoped object cannot have a namespaced owner (the garbage collector would
delete the dependent at once).
"""

from __future__ import annotations

from typing import Any

from pyop.controller.objects import (
    KubeObject,
    api_version_of,
    kind_of,
    meta_get,
    owner_references,
    set_owner_references,
)

__all__ = [
    "AlreadyOwnedError",
    "OwnerReferenceError",
    "get_controller_of",
    "has_controller_reference",
    "is_controlled_by",
    "remove_owner_reference",
    "set_controller_reference",
    "set_owner_reference",
]


class OwnerReferenceError(ValueError):
    """The owner reference cannot be set (missing owner identity, or a scope the API server forbids)."""


class AlreadyOwnedError(OwnerReferenceError):
    """The object already has a different controller; there can only be one."""

    def __init__(self, obj: KubeObject, existing: dict[str, Any]) -> None:
        super().__init__(
            f"object {meta_get(obj, 'namespace') or ''}/{meta_get(obj, 'name')} is already owned by another "
            f"{existing.get('kind')} controller {existing.get('name')}"
        )
        self.existing = existing


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _same_owner(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (
        _group(str(a.get("apiVersion", ""))) == _group(str(b.get("apiVersion", "")))
        and a.get("kind") == b.get("kind")
        and a.get("name") == b.get("name")
    )


def _reference_to(owner: KubeObject) -> dict[str, Any]:
    reference = {
        "apiVersion": api_version_of(owner),
        "kind": kind_of(owner),
        "name": meta_get(owner, "name"),
        "uid": meta_get(owner, "uid"),
    }
    missing = [key for key, value in reference.items() if not value]
    if missing:
        raise OwnerReferenceError(f"owner lacks {', '.join(missing)}: use the owner as read from the API server")
    return reference


def _validate_scope(owner: KubeObject, obj: KubeObject) -> None:
    owner_namespace = meta_get(owner, "namespace") or ""
    if not owner_namespace:
        return
    object_namespace = meta_get(obj, "namespace") or ""
    if not object_namespace:
        raise OwnerReferenceError(
            f"cluster-scoped resource must not have a namespace-scoped owner, owner's namespace {owner_namespace}"
        )
    if object_namespace != owner_namespace:
        raise OwnerReferenceError(
            f"cross-namespace owner references are disallowed, owner's namespace {owner_namespace}, "
            f"obj's namespace {object_namespace}"
        )


def _upsert(references: list[dict[str, Any]], reference: dict[str, Any]) -> list[dict[str, Any]]:
    for index, existing in enumerate(references):
        if _same_owner(existing, reference):
            references[index] = reference
            return references
    references.append(reference)
    return references


def set_controller_reference(owner: KubeObject, obj: KubeObject, *, block_owner_deletion: bool = True) -> None:
    """Make `owner` the controller of `obj` (`controller: true`); raises `AlreadyOwnedError` for a second one."""
    reference = _reference_to(owner)
    reference["controller"] = True
    reference["blockOwnerDeletion"] = block_owner_deletion
    _validate_scope(owner, obj)
    references = owner_references(obj)
    existing = next((ref for ref in references if ref.get("controller")), None)
    if existing is not None and not _same_owner(existing, reference):
        raise AlreadyOwnedError(obj, existing)
    set_owner_references(obj, _upsert(references, reference))


def set_owner_reference(owner: KubeObject, obj: KubeObject) -> None:
    """Add `owner` as a (non-controller) owner of `obj`, or refresh its reference."""
    reference = _reference_to(owner)
    _validate_scope(owner, obj)
    references = owner_references(obj)
    for existing in references:
        if _same_owner(existing, reference) and existing.get("controller"):
            # Keep an existing controller flag: demoting the controller is not what "add an owner" means.
            reference["controller"] = True
            reference["blockOwnerDeletion"] = existing.get("blockOwnerDeletion", False)
    set_owner_references(obj, _upsert(references, reference))


def remove_owner_reference(owner: KubeObject, obj: KubeObject) -> bool:
    """Remove `owner`'s reference from `obj`; returns whether there was one."""
    target = {"apiVersion": api_version_of(owner), "kind": kind_of(owner), "name": meta_get(owner, "name")}
    references = owner_references(obj)
    kept = [ref for ref in references if not _same_owner(ref, target)]
    if len(kept) == len(references):
        return False
    set_owner_references(obj, kept)
    return True


def get_controller_of(obj: KubeObject) -> dict[str, Any] | None:
    """The reference marked `controller: true`, if any (wire-form dict)."""
    return next((ref for ref in owner_references(obj) if ref.get("controller")), None)


def has_controller_reference(obj: KubeObject) -> bool:
    return get_controller_of(obj) is not None


def is_controlled_by(obj: KubeObject, owner: KubeObject) -> bool:
    """Whether `owner` (same uid) is the controller of `obj`."""
    controller = get_controller_of(obj)
    return controller is not None and controller.get("uid") == meta_get(owner, "uid")
