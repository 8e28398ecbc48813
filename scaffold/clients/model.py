"""What a typed client is made of: one `ClientKind` per kind with a `+genclient` tag, read from its tags.

The project's models (`collect.py`) and pyop's built-in kinds (`builtin.py`) both end up here, so one renderer
(`render.py`) writes both clientsets. The tags' meaning is client-gen's: every verb by default; `noVerbs`,
`readonly`, `onlyVerbs=` and `skipVerbs=` choose among them; `noStatus` (and a kind with no `status` field)
removes the status verbs; `nonNamespaced` makes the client cluster-scoped; `method=` adds extra methods.
"""

from __future__ import annotations

import importlib
import keyword
from dataclasses import dataclass, field
from typing import Any

from pyop_scaffold.manifests.errors import MarkerError, SourceLocation
from pyop_scaffold.manifests.markers.client_tags import READONLY_VERBS, STATUS_VERBS, VERBS, ExtraMethod
from pyop_scaffold.manifests.markers.parser import ParsedMarker

ALL_VERBS: tuple[str, ...] = tuple(VERBS.values())  # client-gen's order


@dataclass(frozen=True)
class TypeRef:
    """A model class the generated code imports: `from <module> import <name>`."""

    module: str
    name: str


@dataclass(frozen=True)
class Extra:
    """A `+genclient:method=` extra, resolved: its Python name, verb, subresource and input/result classes."""

    name: str
    verb: str
    subresource: str | None
    input: TypeRef
    result: TypeRef


@dataclass(frozen=True)
class ClientKind:
    group: str  # the API group (spec.group), "" for core
    version: str
    kind: str
    plural: str
    namespaced: bool
    model: TypeRef
    verbs: tuple[str, ...]  # Python verb names, in client-gen's order
    extras: tuple[Extra, ...] = ()
    source: str = ""  # where the tags are written, for the generated docstrings

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass
class GroupVersion:
    """The kinds of one group/version and the accessor name the clientset gives them (`batch_v1`)."""

    group: str
    version: str
    accessor: str
    kinds: list[ClientKind] = field(default_factory=list)


def group_versions(kinds: list[ClientKind], short_names: dict[str, str]) -> list[GroupVersion]:
    """Kinds grouped by group/version, sorted; `short_names` maps an API group to its accessor prefix."""
    found: dict[tuple[str, str], GroupVersion] = {}
    for kind in sorted(kinds, key=lambda k: (k.group, k.version, k.kind)):
        key = (kind.group, kind.version)
        if key not in found:
            found[key] = GroupVersion(kind.group, kind.version, f"{short_names[kind.group]}_{kind.version}")
        found[key].kinds.append(kind)
    return list(found.values())


def accessor_prefixes(groups: set[str]) -> dict[str, str]:
    """`crew.my.domain` -> `crew`, "" -> `core` (client-go's CoreV1); the whole group when first labels clash."""
    first = {group: _identifier(group.split(".")[0]) if group else "core" for group in groups}
    clashing = {name for name in first.values() if list(first.values()).count(name) > 1}
    return {group: _identifier(group) if name in clashing else name for group, name in first.items()}


def _identifier(text: str) -> str:
    name = "".join(c if c.isalnum() else "_" for c in text.lower())
    return f"{name}_" if keyword.iskeyword(name) else name


def verbs_from_tags(markers: list[ParsedMarker], has_status: bool, where: str) -> tuple[str, ...]:
    """The verbs the tags allow (client-gen's rules); contradictory tags are errors at the tag's line."""
    by_name = {m.name: m for m in markers if m.value is not False}
    choosers = [name for name in ("genclient:noVerbs", "genclient:readonly", "genclient:onlyVerbs") if name in by_name]
    if len(choosers) > 1:
        later = max((by_name[name] for name in choosers), key=lambda m: m.location.line)
        raise MarkerError(
            f"+{choosers[0]} and +{choosers[1]} on {where} contradict each other; keep one", later.location
        )
    verbs: set[str] = set(ALL_VERBS)
    if "genclient:noVerbs" in by_name:
        verbs = set()
    elif "genclient:readonly" in by_name:
        verbs = set(READONLY_VERBS)
    elif "genclient:onlyVerbs" in by_name:
        verbs = set(by_name["genclient:onlyVerbs"].value)
    if "genclient:skipVerbs" in by_name:
        skip = by_name["genclient:skipVerbs"]
        if choosers and choosers[0] != "genclient:onlyVerbs":
            raise MarkerError(
                f"+genclient:skipVerbs has nothing to skip after +{choosers[0]} on {where}", skip.location
            )
        verbs -= set(skip.value)
    if "genclient:noStatus" in by_name or not has_status:
        verbs -= STATUS_VERBS
    return tuple(verb for verb in ALL_VERBS if verb in verbs)


def resolve_type(text: str | None, own: TypeRef, location: SourceLocation) -> TypeRef:
    """An input/result type of a `method=` extra: the kind itself (None), a Go path of a built-in type
    (`k8s.io/api/autoscaling/v1.Scale`, `k8s.io/apimachinery/pkg/apis/meta/v1.Status`), a Python path
    (`pyop.api.k8s.policy.v1.Eviction`) or a class name of the kind's own module. It must import."""
    if text is None:
        return own
    if "/" in text:
        path, _, name = text.rpartition(".")
        parts = path.split("/")
        if path.startswith("k8s.io/api/") and len(parts) == 4:
            module = f"pyop.api.k8s.{parts[2]}.{parts[3]}"
        elif path.startswith("k8s.io/apimachinery/pkg/apis/") and len(parts) == 6:
            module = f"pyop.api.k8s.{parts[4]}.{parts[5]}"
        else:
            raise MarkerError(
                f"type {text!r}: only k8s.io/api/<group>/<version>.<Kind> and "
                "k8s.io/apimachinery/pkg/apis/<group>/<version>.<Kind> map to pyop's models; or give a Python path",
                location,
            )
        ref = TypeRef(module, name)
    elif "." in text:
        module, _, name = text.rpartition(".")
        ref = TypeRef(module, name)
    else:
        ref = TypeRef(own.module, text)
    _check_model(ref, text, location)
    return ref


def _check_model(ref: TypeRef, text: str, location: SourceLocation) -> None:
    from pydantic import BaseModel

    try:
        value: Any = getattr(importlib.import_module(ref.module), ref.name)
    except (ImportError, AttributeError):
        raise MarkerError(f"type {text!r}: no class {ref.name} in module {ref.module}", location) from None
    if not (isinstance(value, type) and issubclass(value, BaseModel)):
        raise MarkerError(f"type {text!r}: {ref.module}.{ref.name} is not a pydantic model", location)


def extras_from_tags(
    markers: list[ParsedMarker], own: TypeRef, verbs: tuple[str, ...], where: str
) -> tuple[Extra, ...]:
    """The `+genclient:method=` extras; a name that repeats a verb or another extra is an error at its line."""
    taken = set(verbs)
    extras: list[Extra] = []
    for marker in markers:
        if marker.name != "genclient:method":
            continue
        method: ExtraMethod = marker.value
        name = method.python_name
        if name in taken or keyword.iskeyword(name) or name.startswith("_"):
            raise MarkerError(f"+genclient:method={method.name} on {where}: the name {name} is taken", marker.location)
        if method.verb == "list" and method.subresource is not None:
            raise MarkerError(f"+genclient:method={method.name}: a list has no subresource", marker.location)
        taken.add(name)
        extras.append(
            Extra(
                name,
                method.verb,
                method.subresource,
                resolve_type(method.input, own, marker.location),
                resolve_type(method.result, own, marker.location),
            )
        )
    return tuple(extras)
