"""``metadata.managedFields`` bookkeeping: which manager set which fields, in FieldsV1 form.

Recorded, not enforced: the server notes the fields of each Apply (the applied configuration)
and each Update (the fields that write changed), so tests can check that a controller applies
with its own field manager. Conflicts between managers and removal of fields a manager stops
applying are not modelled.
"""

from __future__ import annotations

import json
from typing import Any

from pyop.testing.patch import MERGE_KEYS

Fields = dict[str, Any]
_TRACKED_METADATA = ("labels", "annotations", "finalizers", "ownerReferences")


def _list_item_key(field: str, item: Any) -> str | None:
    if not isinstance(item, dict):
        return "v:" + json.dumps(item, separators=(",", ":"))
    key = MERGE_KEYS.get(field) or (
        "containerPort" if "containerPort" in item else "port" if field == "ports" else None
    )
    if key and key in item:
        return "k:" + json.dumps({key: item[key]}, separators=(",", ":"))
    return None


def field_set(value: Any, field: str = "") -> Fields:
    """FieldsV1 of a value: nested ``f:`` entries for maps, ``k:``/``v:`` entries for keyed lists."""
    if isinstance(value, dict):
        return {f"f:{key}": field_set(item, key) for key, item in value.items()}
    if isinstance(value, list):
        entries: Fields = {}
        for item in value:
            item_key = _list_item_key(field, item)
            if item_key is None:
                return {}  # atomic list: owning the field owns all of it
            entries[item_key] = {".": {}, **field_set(item, field)} if isinstance(item, dict) else {}
        return entries
    return {}


def object_field_set(obj: dict[str, Any], *, skip_status: bool = False) -> Fields:
    """The fields a writer of ``obj`` sets: everything but identity and server-owned metadata
    (and status, when it belongs to the status subresource)."""
    fields = {
        f"f:{key}": field_set(value, key)
        for key, value in obj.items()
        if key not in ("apiVersion", "kind", "metadata") and not (skip_status and key == "status")
    }
    metadata = obj.get("metadata") or {}
    tracked = {f"f:{key}": field_set(metadata[key], key) for key in _TRACKED_METADATA if key in metadata}
    if tracked:
        fields["f:metadata"] = tracked
    return fields


def changed_field_set(old: Any, new: Any, field: str = "") -> Fields | None:
    """Fields of ``new`` that differ from ``old`` (None: nothing changed)."""
    if old is new or old == new:
        return None
    if isinstance(old, dict) and isinstance(new, dict):
        changed = {}
        for key, value in new.items():
            old_value = old.get(key)
            if old_value is value:
                continue  # shared with the previous version: unchanged (the common case, decided without a call)
            sub = changed_field_set(old_value, value, key)
            if sub is not None:
                changed[f"f:{key}"] = sub
        return changed or None
    return field_set(new, field)


def merge_field_sets(left: Fields, right: Fields) -> Fields:
    """The union of two field sets: ``left`` itself when ``right`` adds nothing (the usual case for a
    manager that keeps writing the same fields), else a new set sharing the unchanged parts."""
    merged: Fields | None = None
    for key, value in right.items():
        existing = left.get(key)
        combined = value if existing is None else merge_field_sets(existing, value)
        if combined is not existing:
            if merged is None:
                merged = dict(left)
            merged[key] = combined
    return left if merged is None else merged


def record(
    obj: dict[str, Any],
    *,
    manager: str,
    operation: str,
    api_version: str,
    time: str,
    fields: Fields,
    subresource: str = "",
    replace: bool = False,
) -> None:
    """Add or update the entry of (manager, operation, subresource) in ``obj``'s managedFields.

    The list and its entries are replaced, never changed in place: they are shared with the
    previous version of the object.
    """
    if not fields:
        return
    metadata = obj.setdefault("metadata", {})
    entries: list[dict[str, Any]] = metadata.get("managedFields") or []
    for position, entry in enumerate(entries):
        if (entry.get("manager"), entry.get("operation"), entry.get("subresource", "")) == (
            manager,
            operation,
            subresource,
        ):
            previous = (entry.get("fieldsV1") or {}) if not replace else {}
            merged = merge_field_sets(previous, fields)
            if merged == entry.get("fieldsV1") and api_version == entry.get("apiVersion"):
                return  # nothing new: a no-op write must stay a no-op (no resourceVersion bump)
            updated = {**entry, "apiVersion": api_version, "time": time, "fieldsV1": merged}
            metadata["managedFields"] = [*entries[:position], updated, *entries[position + 1 :]]
            return
    entry = {
        "manager": manager,
        "operation": operation,
        "apiVersion": api_version,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource:
        entry["subresource"] = subresource
    metadata["managedFields"] = [*entries, entry]
