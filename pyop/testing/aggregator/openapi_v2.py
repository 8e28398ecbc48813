"""``/openapi/v2`` aggregated: the server's own Swagger document with every available APIService's merged in.

kube-aggregator downloads each APIService's ``/openapi/v2`` and merges them, the server's own first and then by
priority (group priority, then version priority), with kube-openapi's
``MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters``:

- a path the document already has is kept as it is (the first spec wins); the incoming spec is first cut down to
  its new paths and the definitions they reach (``FilterSpecByPathsWithoutSideEffects``);
- a definition both have is kept once when the two are equal apart from ``x-kubernetes-group-version-kind`` (so
  ``ObjectMeta``, ``Status`` and the other shared meta types appear once), their GVK lists then merged and
  sorted; a definition that differs is renamed ``<name>_v2`` (``_v3`` ...; an earlier rename equal to it is reused)
  and the incoming spec's references follow the rename.

Top-level ``parameters`` are merged by the same rule (``#/parameters/`` references), though pyop's servers
define none.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

DEFINITION_PREFIX = "#/definitions/"
PARAMETER_PREFIX = "#/parameters/"
GVK = "x-kubernetes-group-version-kind"


def _walk_refs(node: Any, visit: Callable[[str], str]) -> Any:
    """``node`` with every ``$ref`` passed through ``visit`` (a new structure; ``node`` is not changed)."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            out[key] = visit(value) if key == "$ref" and isinstance(value, str) else _walk_refs(value, visit)
        return out
    if isinstance(node, list):
        return [_walk_refs(item, visit) for item in node]
    return node


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref)
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for item in node:
            _refs(item, found)


def filter_by_paths(spec: dict[str, Any], keep: Iterable[str]) -> dict[str, Any]:
    """``spec`` with only the paths ``keep`` names and the definitions and parameters they reach, transitively."""
    paths = {name: item for name, item in (spec.get("paths") or {}).items() if name in set(keep)}
    definitions = spec.get("definitions") or {}
    parameters = spec.get("parameters") or {}
    used_definitions: set[str] = set()
    used_parameters: set[str] = set()
    pending: set[str] = set()
    _refs(paths, pending)
    while pending:
        ref = pending.pop()
        if ref.startswith(DEFINITION_PREFIX):
            name = ref[len(DEFINITION_PREFIX) :]
            if name in definitions and name not in used_definitions:
                used_definitions.add(name)
                _refs(definitions[name], pending)
        elif ref.startswith(PARAMETER_PREFIX):
            name = ref[len(PARAMETER_PREFIX) :]
            if name in parameters and name not in used_parameters:
                used_parameters.add(name)
                _refs(parameters[name], pending)
    result = {**spec, "paths": paths}
    result["definitions"] = {name: value for name, value in definitions.items() if name in used_definitions}
    if "parameters" in spec:
        result["parameters"] = {name: value for name, value in parameters.items() if name in used_parameters}
    return result


def _without_gvk(schema: Any) -> Any:
    if isinstance(schema, dict) and GVK in schema:
        return {key: value for key, value in schema.items() if key != GVK}
    return schema


def equal_modulo_gvks(first: Any, second: Any) -> bool:
    """kube-openapi's deepEqualDefinitionsModuloGVKs: equal once ``x-kubernetes-group-version-kind`` is ignored."""
    return bool(_without_gvk(first) == _without_gvk(second))


def _gvk_key(entry: Any) -> str:
    if not isinstance(entry, dict):
        return ""
    return f"{entry.get('group', '')}/{entry.get('version', '')}.{entry.get('kind', '')}"


def merged_gvks(existing: dict[str, Any], incoming: dict[str, Any]) -> list[Any] | None:
    """The union of the two GVK lists sorted by ``group/version.kind`` when ``incoming`` adds one, else None."""
    first, second = existing.get(GVK), incoming.get(GVK)
    if second is None:
        return None
    if first is None:
        return list(second)
    seen = {_gvk_key(entry) for entry in first}
    added = [entry for entry in second if _gvk_key(entry) not in seen]
    if not added:
        return None
    return sorted([*first, *added], key=_gvk_key)


def _renamed(used: set[str], incoming: dict[str, Any], dest: dict[str, Any], name: str, value: Any) -> str:
    """The name an incoming definition (or parameter) that clashes with ``dest``'s gets: an earlier rename it equals,
    else the first ``<name>_vN`` free in both."""
    index = 1
    candidate = ""
    found = True
    while found:
        index += 1
        candidate = f"{name}_v{index}"
        found = candidate in dest
        if found and equal_modulo_gvks(dest[candidate], value):
            return candidate
    while candidate in used or candidate in incoming:
        index += 1
        candidate = f"{name}_v{index}"
    used.add(candidate)
    return candidate


def _merge_section(dest: dict[str, Any], source: dict[str, Any], section: str, prefix: str) -> dict[str, Any]:
    """Rename ``source``'s clashing entries of ``section``; returns ``source`` with its references rewritten."""
    existing = dest.get(section) or {}
    incoming = source.get(section) or {}
    used = set(existing)
    renames: dict[str, str] = {}
    for name, value in incoming.items():
        if name not in existing or equal_modulo_gvks(existing[name], value):
            continue
        renames[name] = _renamed(used, incoming, existing, name, value)
    if not renames:
        return source
    by_ref = {prefix + old: prefix + new for old, new in renames.items()}
    rewritten = _walk_refs(source, lambda ref: by_ref.get(ref, ref))
    rewritten[section] = {renames.get(name, name): value for name, value in rewritten[section].items()}
    return dict(rewritten)


def merge_into(dest: dict[str, Any], source: dict[str, Any]) -> None:
    """Merge ``source`` into ``dest`` (mutated; ``source`` is not): paths that ``dest`` has are ignored, definitions
    and parameters deduplicated or renamed (see the module docstring)."""
    if source.get("paths") is None:
        return  # nothing reachable: none of its definitions are used
    dest_paths = dest.setdefault("paths", {})
    keep = [path for path in source["paths"] if path not in dest_paths]
    if not keep:
        return
    if len(keep) != len(source["paths"]):
        source = filter_by_paths(source, keep)
    source = _merge_section(dest, source, "parameters", PARAMETER_PREFIX)
    source = _merge_section(dest, source, "definitions", DEFINITION_PREFIX)
    for section in ("definitions", "parameters"):
        incoming = source.get(section)
        if not incoming:
            continue
        target = dest.setdefault(section, {})
        for name, value in incoming.items():
            existing = target.get(name)
            if existing is None:
                target[name] = copy.deepcopy(value)
                continue
            gvks = merged_gvks(existing, value) if isinstance(existing, dict) and isinstance(value, dict) else None
            if gvks is not None:
                target[name] = {**existing, GVK: gvks}
    for path in keep:
        dest_paths[path] = copy.deepcopy(source["paths"][path])


def merged(local: dict[str, Any], specs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The aggregated document: ``local`` (not changed) with ``specs`` merged in, in the order given; paths and
    definitions sorted as the server writes its own."""
    result = {**local, "paths": dict(local.get("paths") or {}), "definitions": dict(local.get("definitions") or {})}
    if "parameters" in local:
        result["parameters"] = dict(local["parameters"])
    for spec in specs:
        merge_into(result, spec)
    result["paths"] = dict(sorted(result["paths"].items()))
    result["definitions"] = dict(sorted(result["definitions"].items()))
    return result


__all__ = ["equal_modulo_gvks", "filter_by_paths", "merge_into", "merged", "merged_gvks"]
