"""Where in the project an acceptance-check error comes from: the model field, marker or class behind its path.

The check reports in the API server's words, with paths into the CRD (`spec.validation.openAPIV3Schema.
properties[spec].properties[name].pattern`). A user fixes Python, not YAML, so each error also gets the
`file:line` of what produced it: the marker that set the keyword when there is one (`+kubebuilder:validation:
Pattern`), else the field the path ends at, else the kind's class. The path is followed through the models'
fields by their wire names (`properties[X]`, `items`, `additionalProperties`); built-in types (a PodSpec) are not
the user's files, so the innermost project field is named.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pyop.schema.errors import FieldError
from pyop_scaffold.manifests.acceptance.cel_budget import BudgetError
from pyop_scaffold.manifests.errors import SourceLocation
from pyop_scaffold.manifests.markers.comments import DISPLAY_ROOT, EMPTY, DocBlock, read_module_docs


class KindSource(Protocol):
    """What the loader knows of one version of a kind (`loader.KindVersion`)."""

    cls: type
    docs: DocBlock
    source: str

    @property
    def info(self) -> Any: ...


# Schema keyword -> the markers that set it; the first marker of these on the field (or type) is named.
_KEYWORD_MARKERS: dict[str, tuple[str, ...]] = {
    "pattern": ("kubebuilder:validation:Pattern",),
    "x-kubernetes-validations": ("kubebuilder:validation:XValidation", "k8s:immutable"),
    "default": ("kubebuilder:default", "default"),
    "example": ("kubebuilder:example",),
    "enum": ("kubebuilder:validation:Enum", "k8s:enum"),
    "format": ("kubebuilder:validation:Format",),
    "type": ("kubebuilder:validation:Type", "kubebuilder:validation:Schemaless"),
    "uniqueItems": ("kubebuilder:validation:UniqueItems",),
    "maxLength": ("kubebuilder:validation:MaxLength",),
    "minLength": ("kubebuilder:validation:MinLength",),
    "maxItems": ("kubebuilder:validation:MaxItems",),
    "minItems": ("kubebuilder:validation:MinItems",),
    "maxProperties": ("kubebuilder:validation:MaxProperties",),
    "minProperties": ("kubebuilder:validation:MinProperties",),
    "maximum": ("kubebuilder:validation:Maximum",),
    "minimum": ("kubebuilder:validation:Minimum",),
    "multipleOf": ("kubebuilder:validation:MultipleOf",),
    "x-kubernetes-list-type": ("listType",),
    "x-kubernetes-list-map-keys": ("listMapKey",),
    "x-kubernetes-map-type": ("mapType", "structType"),
    "x-kubernetes-preserve-unknown-fields": (
        "kubebuilder:pruning:PreserveUnknownFields",
        "kubebuilder:validation:XPreserveUnknownFields",
    ),
    "x-kubernetes-embedded-resource": (
        "kubebuilder:validation:XEmbeddedResource",
        "kubebuilder:validation:EmbeddedResource",
    ),
    "x-kubernetes-int-or-string": ("kubebuilder:validation:XIntOrString",),
    "externalDocs": ("kubebuilder:externalDocs",),
    "title": ("kubebuilder:title",),
}
# Parts of a version outside its schema -> the class markers that make them.
_VERSION_PARTS: dict[str, tuple[str, ...]] = {
    "additionalPrinterColumns": ("kubebuilder:printcolumn",),
    "selectableFields": ("kubebuilder:selectablefield",),
    "subresources": ("kubebuilder:subresource:scale", "kubebuilder:subresource:status"),
    "deprecationWarning": ("kubebuilder:deprecatedversion",),
    "deprecated": ("kubebuilder:deprecatedversion",),
}
_SEGMENT = re.compile(r"\[([^\]]*)\]|([^.\[]+)")


def located_problems(
    crd: dict[str, Any], errors: list[FieldError], kinds: Sequence[KindSource], root: Path
) -> list[str]:
    """One line per error: `file:line: The CustomResourceDefinition "<name>" is invalid: <path>: <problem>`, a
    cost refusal followed by the bounds that would lower the estimate (`; bound it: add maxItems to ...`)."""
    name = (crd.get("metadata") or {}).get("name", "")
    versions = _versions_of(crd, kinds)
    with _display_root(root):
        return [
            f'{locate(error.field, versions, root)}: The CustomResourceDefinition "{name}" is invalid: {error}'
            + (f"; bound it: {error.hint}" if isinstance(error, BudgetError) and error.hint else "")
            for error in errors
        ]


def locate(path: str, versions: list[KindSource | None], root: Path) -> SourceLocation:
    """The project location behind an error path of a CRD whose versions came from `versions` (in CRD order)."""
    segments = [m.group(1) if m.group(1) is not None else m.group(2) for m in _SEGMENT.finditer(path)]
    known = [version for version in versions if version is not None]
    if not known:
        return SourceLocation("PROJECT", 1)
    version = known[0]
    if segments[:2] == ["spec", "versions"] and len(segments) > 2 and segments[2].isdigit():
        position = int(segments[2])
        if position < len(versions) and versions[position] is not None:
            version = versions[position]  # type: ignore[assignment]
        rest = segments[3:]
    elif segments[:1] == ["spec"]:
        rest = segments[1:]  # hoisted: spec.validation..., spec.additionalPrinterColumns...
    else:
        rest = segments
    kind_place = SourceLocation(version.source.replace("\\", "/"), version.docs.line or 1)
    if rest[:2] in (["schema", "openAPIV3Schema"], ["validation", "openAPIV3Schema"]):
        return _schema_location(version.cls, rest[2:], version.docs, kind_place, root)
    if rest and rest[0] in _VERSION_PARTS:
        wanted = _VERSION_PARTS[rest[0]]
        nth = int(rest[1]) if len(rest) > 1 and rest[1].isdigit() else 0
        return _marker_location(version.docs, wanted, nth) or kind_place
    if rest[:1] == ["names"] or rest[:1] == ["scope"]:
        return _marker_location(version.docs, ("kubebuilder:resource",), 0) or kind_place
    if segments[:1] == ["metadata"]:
        return _marker_location(version.docs, ("kubebuilder:metadata",), 0) or kind_place
    return kind_place


def _versions_of(crd: dict[str, Any], kinds: Sequence[KindSource]) -> list[KindSource | None]:
    spec = crd.get("spec") or {}
    group, kind = spec.get("group"), (spec.get("names") or {}).get("kind")
    by_version = {k.info.version: k for k in kinds if k.info.group == group and k.info.kind == kind}
    return [by_version.get(v.get("name")) for v in spec.get("versions") or []]


@dataclass
class _Place:
    cls: Any  # the model class (or other type) the schema at this point was built from
    docs: DocBlock  # the markers of the field (or class) this point belongs to
    location: SourceLocation | None  # that field's line, when it is a project file


def _schema_location(
    cls: type, segments: list[str], class_docs: DocBlock, kind_place: SourceLocation, root: Path
) -> SourceLocation:
    place = _Place(cls, class_docs, kind_place)
    position = 0
    while position < len(segments):
        segment = segments[position]
        if segment == "properties" and position + 1 < len(segments):
            found = _field(place.cls, segments[position + 1], root)
            if found is None:
                break
            # A built-in type's field is not the user's: keep naming the innermost project field.
            place = found if found.location is not None else _Place(found.cls, EMPTY, place.location)
            position += 2
            continue
        if segment in ("items", "additionalProperties"):
            place = _Place(_element(place.cls, list if segment == "items" else dict), place.docs, place.location)
            position += 1
            continue
        wanted = _KEYWORD_MARKERS.get(segment)
        if wanted is not None:
            following = segments[position + 1] if position + 1 < len(segments) else ""
            nth = int(following) if following.isdigit() else 0
            for docs in (place.docs, _class_docs(place.cls, root)):
                location = _marker_location(docs, wanted, nth)
                if location is not None:
                    return location
        break
    return place.location or kind_place


def _marker_location(docs: DocBlock, names: tuple[str, ...], nth: int) -> SourceLocation | None:
    found = [marker for marker in docs.markers if marker.name in names]
    if not found:
        return None
    return found[nth].location if nth < len(found) else found[0].location


def _field(cls: Any, wire_name: str, root: Path) -> _Place | None:
    """The field of model `cls` whose JSON name is `wire_name`: its type, its docs and (in the project) its line."""
    fields = getattr(cls, "model_fields", None)
    if not isinstance(fields, dict):
        return None
    for name, info in fields.items():
        if (getattr(info, "serialization_alias", None) or getattr(info, "alias", None) or name) != wire_name:
            continue
        docs, location = _field_docs(cls, name, root)
        return _Place(_model_in(info.annotation), docs, location)
    return None


def _field_docs(cls: type, name: str, root: Path) -> tuple[DocBlock, SourceLocation | None]:
    for klass in cls.__mro__:
        if name not in getattr(klass, "__dict__", {}).get("__annotations__", {}):
            continue
        path = _module_path(klass.__module__, root)
        if path is None:
            return EMPTY, None
        block = read_module_docs(path).for_field(klass.__qualname__, name)
        if not block.line:
            return block, None
        return block, SourceLocation(path.relative_to(root).as_posix(), block.line)
    return EMPTY, None


def _class_docs(cls: Any, root: Path) -> DocBlock:
    """The markers above (and in the docstring of) a project model class; EMPTY for other types."""
    if not isinstance(cls, type):
        return EMPTY
    path = _module_path(cls.__module__, root)
    return read_module_docs(path).for_class(cls.__qualname__) if path is not None else EMPTY


def _module_path(module: str, root: Path) -> Path | None:
    """The project file of module `module`, if it is one (built-in types live outside the project)."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _unwrap(annotation: Any) -> list[Any]:
    """The types an annotation may hold: `X | None`, `Annotated[X, ...]` and `Optional[X]` give X."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        return [t for arg in typing.get_args(annotation) if arg is not type(None) for t in _unwrap(arg)]
    return [annotation]


def _model_in(annotation: Any) -> Any:
    options = _unwrap(annotation)
    return options[0] if len(options) == 1 else annotation


def _element(annotation: Any, container: type) -> Any:
    """The item type of a list annotation, or the value type of a dict one (else the annotation itself)."""
    for option in _unwrap(annotation):
        origin = typing.get_origin(option)
        if isinstance(origin, type) and issubclass(origin, container):
            args = typing.get_args(option)
            if args:
                return _model_in(args[-1])
    return annotation


@contextmanager
def _display_root(root: Path) -> Iterator[None]:
    token = DISPLAY_ROOT.set(root)
    try:
        yield
    finally:
        DISPLAY_ROOT.reset(token)
