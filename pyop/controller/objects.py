"""Uniform access to the metadata of an object that is a pyop model or a plain dict.

Helpers such as `add_finalizer` and `set_controller_reference` work on both: reconcilers hold models, while
objects of kinds without a model class (built-ins owned by a controller) are dicts.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from pydantic import BaseModel

from pyop.api.model import OwnerReference

__all__ = [
    "KubeObject",
    "api_version_of",
    "kind_of",
    "meta_get",
    "meta_set",
    "owner_references",
    "set_owner_references",
]

KubeObject = BaseModel | MutableMapping[str, Any]

# Python attribute names of ObjectMeta for the wire names the helpers use.
_ATTRIBUTES = {
    "name": "name",
    "namespace": "namespace",
    "uid": "uid",
    "finalizers": "finalizers",
    "ownerReferences": "owner_references",
    "generation": "generation",
    "resourceVersion": "resource_version",
    "labels": "labels",
    "annotations": "annotations",
}


def _metadata_dict(obj: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = obj["metadata"] = {}
    return metadata  # type: ignore[no-any-return]


def meta_get(obj: KubeObject, field: str) -> Any:
    """A metadata field by its wire name (`ownerReferences`), from a model or a dict."""
    if isinstance(obj, BaseModel):
        metadata = getattr(obj, "metadata", None)
        return None if metadata is None else getattr(metadata, _ATTRIBUTES[field], None)
    return (obj.get("metadata") or {}).get(field)


def meta_set(obj: KubeObject, field: str, value: Any) -> None:
    """Set (or with None, clear) a metadata field by its wire name."""
    if isinstance(obj, BaseModel):
        metadata = getattr(obj, "metadata", None)
        if metadata is None:
            raise TypeError(f"{type(obj).__name__} has no metadata")
        setattr(metadata, _ATTRIBUTES[field], value)
        return
    metadata = _metadata_dict(obj)
    if value is None:
        metadata.pop(field, None)
    else:
        metadata[field] = value


def api_version_of(obj: KubeObject) -> str:
    return _type_field(obj, "api_version", "apiVersion")


def kind_of(obj: KubeObject) -> str:
    return _type_field(obj, "kind", "kind")


def _type_field(obj: KubeObject, attribute: str, key: str) -> str:
    """apiVersion or kind: a dict's field; a model's field, else its class's `resource_info` (same name)."""
    if isinstance(obj, BaseModel):
        value = getattr(obj, attribute, "") or ""
        if not value:
            info = getattr(type(obj), "resource_info", None)
            value = getattr(info, attribute) if info is not None else ""
        return str(value)
    return str(obj.get(key) or "")


def owner_references(obj: KubeObject) -> list[dict[str, Any]]:
    """The object's owner references as wire-form dicts (a copy: edit, then `set_owner_references`)."""
    references = meta_get(obj, "ownerReferences") or []
    return [
        ref.model_dump(by_alias=True, exclude_none=True) if isinstance(ref, BaseModel) else dict(ref)
        for ref in references
    ]


def set_owner_references(obj: KubeObject, references: list[dict[str, Any]]) -> None:
    if isinstance(obj, BaseModel):
        meta_set(obj, "ownerReferences", [OwnerReference.model_validate(ref) for ref in references] or None)
    else:
        meta_set(obj, "ownerReferences", references or None)
