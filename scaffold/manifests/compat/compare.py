"""Which CRD changes break what is already there: stored objects, and clients written against the old API.

Each finding is one line: `<crd> <version>: <field path>: <what changed> (<what breaks>)`. Checked:
- the CRD removed, its scope or kind changed (every stored object and client);
- a served version no longer served, a version that may hold stored objects removed, the storage version changed
  (objects stay stored in the old one until a storage migration rewrites them);
- in each version served before and after: a field removed (clients lose it; stored values are pruned), a type
  changed, a field newly required without a default, validation tightened (bounds, lengths, item and property
  counts, pattern, format, enum values removed or an enum added, a new CEL rule, uniqueness, nullable dropped),
  unknown fields no longer preserved, list and map types and keys changed.
Loosening (a new optional field, a wider bound, a new enum value) is compatible and not reported.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

Schema = dict[str, Any]

# keyword -> (is the new value tighter than the old?, how to say it)
_LOWER_BOUNDS = ("minimum", "minLength", "minItems", "minProperties")
_UPPER_BOUNDS = ("maximum", "maxLength", "maxItems", "maxProperties")


def breaking_changes(old: dict[str, Schema], new: dict[str, Schema]) -> list[str]:
    """Every breaking change from the `old` CRDs to the `new` ones ({name: CRD}), one line each, sorted."""
    found: list[str] = []
    for name in sorted(old):
        if name not in new:
            found.append(f"{name}: the CRD is removed (every stored object and client of it)")
            continue
        found.extend(_crd_changes(name, old[name], new[name]))
    return found


def _crd_changes(name: str, old: Schema, new: Schema) -> Iterator[str]:
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if old_spec.get("scope") != new_spec.get("scope"):
        yield f"{name}: scope changed from {old_spec.get('scope')} to {new_spec.get('scope')} (stored objects)"
    old_kind = (old_spec.get("names") or {}).get("kind")
    new_kind = (new_spec.get("names") or {}).get("kind")
    if old_kind != new_kind:
        yield f"{name}: kind changed from {old_kind} to {new_kind} (every client)"
    old_versions = {v.get("name"): v for v in old_spec.get("versions") or []}
    new_versions = {v.get("name"): v for v in new_spec.get("versions") or []}
    old_storage = next((n for n, v in old_versions.items() if v.get("storage")), None)
    new_storage = next((n for n, v in new_versions.items() if v.get("storage")), None)
    for version, before in old_versions.items():
        after = new_versions.get(version)
        if after is None:
            if before.get("storage") or version == old_storage:
                yield (
                    f"{name} {version}: the storage version is removed (stored objects can no longer be read; "
                    "migrate them to another version and drop it from status.storedVersions first)"
                )
            elif before.get("served"):
                yield f"{name} {version}: the version is removed (clients of {version})"
            continue
        if before.get("served") and not after.get("served"):
            yield f"{name} {version}: no longer served (clients of {version})"
        if before.get("served") and after.get("served"):
            old_schema = ((before.get("schema") or {}).get("openAPIV3Schema")) or {}
            new_schema = ((after.get("schema") or {}).get("openAPIV3Schema")) or {}
            for line in _schema_changes(old_schema, new_schema, ""):
                yield f"{name} {version}: {line}"
    if old_storage and new_storage and old_storage != new_storage and old_storage in new_versions:
        yield (
            f"{name}: storage version changed from {old_storage} to {new_storage} (objects stay stored as "
            f"{old_storage} until a storage migration rewrites them; keep {old_storage} served until then)"
        )


def _schema_changes(old: Schema, new: Schema, path: str) -> Iterator[str]:
    where = path or "."
    old_type, new_type = old.get("type"), new.get("type")
    if old_type != new_type and old_type is not None:
        yield f"{where}: type changed from {old_type} to {new_type or 'any'} (stored values and clients)"
        return
    if old.get("x-kubernetes-preserve-unknown-fields") and not new.get("x-kubernetes-preserve-unknown-fields"):
        yield f"{where}: unknown fields are no longer preserved (the API server prunes them from stored objects)"
    if old.get("x-kubernetes-int-or-string") and not new.get("x-kubernetes-int-or-string"):
        yield f"{where}: no longer int-or-string (stored values of the other type)"
    yield from _validation_changes(old, new, where)
    yield from _structure_changes(old, new, where)
    old_props, new_props = old.get("properties") or {}, new.get("properties") or {}
    for field in sorted(old_props):
        child = f"{path}.{field}"
        if field not in new_props:
            if not new.get("x-kubernetes-preserve-unknown-fields"):
                yield f"{child}: the field is removed (clients lose it; the API server prunes stored values)"
            continue
        yield from _schema_changes(old_props[field], new_props[field], child)
    newly_required = sorted(set(new.get("required") or []) - set(old.get("required") or []))
    for field in newly_required:
        if "default" not in (new_props.get(field) or {}):
            yield f"{path}.{field}: newly required with no default (stored objects and clients without it)"
    if isinstance(old.get("items"), dict) and isinstance(new.get("items"), dict):
        yield from _schema_changes(old["items"], new["items"], f"{path}[*]")
    old_values, new_values = old.get("additionalProperties"), new.get("additionalProperties")
    if isinstance(old_values, dict) and isinstance(new_values, dict):
        yield from _schema_changes(old_values, new_values, f"{path}[*]")


def _validation_changes(old: Schema, new: Schema, where: str) -> Iterator[str]:
    for key in _LOWER_BOUNDS:
        if key in new and (key not in old or _number(new[key]) > _number(old[key])):
            yield f"{where}: {key} raised from {old.get(key, 'none')} to {new[key]} ({_hint(key)})"
    for key in _UPPER_BOUNDS:
        if key in new and (key not in old or _number(new[key]) < _number(old[key])):
            yield f"{where}: {key} lowered from {old.get(key, 'none')} to {new[key]} ({_hint(key)})"
    for key in ("exclusiveMinimum", "exclusiveMaximum", "uniqueItems"):
        if new.get(key) and not old.get(key):
            yield f"{where}: {key} added (stored values at the bound or repeated fail their next update)"
    for key in ("pattern", "format"):
        if key in new and new[key] != old.get(key):
            before, after = _show(old.get(key)), _show(new[key])
            yield f"{where}: {key} changed from {before} to {after} (stored values that do not match)"
    if "enum" in new:
        removed = [value for value in old.get("enum", []) if value not in new["enum"]] if "enum" in old else None
        if removed is None:
            yield f"{where}: an enum is added ({_show(new['enum'])}; stored values outside it)"
        elif removed:
            yield f"{where}: enum values removed: {_show(removed)} (stored objects and clients using them)"
    old_rules = {_rule_key(rule) for rule in old.get("x-kubernetes-validations") or []}
    for rule in new.get("x-kubernetes-validations") or []:
        if _rule_key(rule) not in old_rules:
            yield f"{where}: new validation rule {_show(rule.get('rule'))} (writes that break it are refused)"
    if old.get("nullable") and not new.get("nullable"):
        yield f"{where}: no longer nullable (stored nulls and clients sending null)"


def _structure_changes(old: Schema, new: Schema, where: str) -> Iterator[str]:
    for key in ("x-kubernetes-list-type", "x-kubernetes-map-type"):
        before, after = old.get(key), new.get(key)
        if before != after and (before is not None or after not in (None, "atomic", "granular")):
            yield f"{where}: {key} changed from {before or 'unset'} to {after or 'unset'} (server-side apply merges)"
    if old.get("x-kubernetes-list-map-keys") != new.get("x-kubernetes-list-map-keys") and (
        "x-kubernetes-list-map-keys" in old
    ):
        yield (
            f"{where}: list map keys changed from {_show(old.get('x-kubernetes-list-map-keys'))} to "
            f"{_show(new.get('x-kubernetes-list-map-keys'))} (server-side apply merges, stored duplicates)"
        )


def _hint(key: str) -> str:
    subject = {"Length": "strings", "Items": "lists", "Properties": "maps"}
    for suffix, noun in subject.items():
        if key.endswith(suffix):
            return f"stored {noun} outside it fail their next update"
    return "stored values outside it fail their next update"


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def _rule_key(rule: Any) -> str:
    return json.dumps(rule.get("rule") if isinstance(rule, dict) else rule, sort_keys=True)


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
