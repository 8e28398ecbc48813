"""The REST mapping of built-in kinds (plural, scope) that the OpenAPI definitions do not carry.

kubernetes-validate's definitions say what a Deployment looks like but not where it lives: the plural and whether it
is namespaced come from the API's paths, which that package drops. kubernetes_asyncio (a runtime dependency of pyop,
so always installed) ships a client generated from the full OpenAPI document, whose API modules name every path
with the type it answers. This module reads those sources as text (importing the generated client costs seconds)
and maps (group, version, kind) to (plural, namespaced). The plural and scope of a kind do not change between its
versions, so a version the client does not know yet (an alpha newer than the client) takes them from another
version of the same group and kind.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

_CLIENT_PACKAGE: Final = "kubernetes_asyncio"
# `response_types_map = {200: "V1Deployment", ...}` followed by the call's path and verb, in one method.
_CALL: Final = re.compile(
    r"response_types_map = \{\s*200: \"(\w+)\",[^}]*\}\s*"
    r"return self\.api_client\.call_api\(\s*'([^']+)', '(?:GET|POST|PUT)'"
)
_PATH: Final = re.compile(
    r"^/(?:api|apis/(?P<group>[^/]+))/(?P<version>[^/]+)/(?P<ns>namespaces/\{namespace\}/)?"
    r"(?P<plural>[a-z0-9]+)(?:/\{name\})?$"
)
# Generated type names: an optional group prefix (`CoreV1Event`, `EventsV1Event`), the version, the kind.
_TYPE_PREFIX: Final = r"(?:[A-Z][a-z0-9]*)*?V\d+(?:alpha\d+|beta\d+)?"


class RESTMappingSourceError(RuntimeError):
    """The client package whose paths give plurals and scopes is not installed."""


@dataclass(frozen=True)
class RESTMapping:
    """Where a kind is served: its plural and whether it is namespaced."""

    plural: str
    namespaced: bool


@functools.cache
def _records() -> dict[tuple[str, str], frozenset[tuple[str, str, bool]]]:
    """(group, version) -> {(generated type name, plural, namespaced)} from every collection or object path."""
    spec = importlib.util.find_spec(_CLIENT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RESTMappingSourceError(f"{_CLIENT_PACKAGE} is not installed; its API paths give built-in plurals")
    api = Path(next(iter(spec.submodule_search_locations))) / "client" / "api"
    found: dict[tuple[str, str], set[tuple[str, str, bool]]] = {}
    for module in sorted(api.glob("*_api.py")):
        for match in _CALL.finditer(module.read_text(encoding="utf-8")):
            path = _PATH.match(match.group(2))
            if path is None:
                continue
            key = (path.group("group") or "", path.group("version"))
            found.setdefault(key, set()).add((match.group(1), path.group("plural"), bool(path.group("ns"))))
    return {key: frozenset(value) for key, value in found.items()}


def _lookup(group: str, version: str | None, kind: str) -> set[RESTMapping]:
    type_name = re.compile(_TYPE_PREFIX + re.escape(kind))
    return {
        RESTMapping(plural, namespaced)
        for (record_group, record_version), entries in _records().items()
        if record_group == group and (version is None or record_version == version)
        for name, plural, namespaced in entries
        if type_name.fullmatch(name)
    }


def rest_mapping(group: str, version: str, kind: str) -> RESTMapping | None:
    """The kind's plural and scope, or None when the kind has no REST collection (Scale, Eviction, Status)."""
    for candidates in (_lookup(group, version, kind), _lookup(group, None, kind)):
        if len(candidates) == 1:
            return next(iter(candidates))
        if candidates:
            found = sorted(candidates, key=repr)
            raise RESTMappingSourceError(f"{group}/{version} {kind} has several REST mappings: {found}")
    return None
