"""Building CustomResourceDefinition objects: one per group and kind, holding every version of the kind."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from pyop_scaffold.manifests.crd.schema import Schema, SchemaBuilder
from pyop_scaffold.manifests.crd.versions import sort_versions
from pyop_scaffold.manifests.errors import MarkerError
from pyop_scaffold.manifests.loader import KindVersion

_API_VERSION_DOC = (
    "APIVersion defines the versioned schema of this representation of an object.\n"
    "Servers should convert recognized schemas to the latest internal value, and\n"
    "may reject unrecognized values.\n"
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
)
_KIND_DOC = (
    "Kind is a string value representing the REST resource this object represents.\n"
    "Servers may infer this from the endpoint the client submits requests to.\n"
    "Cannot be updated.\n"
    "In CamelCase.\n"
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)
PRINTER_COLUMN_TYPES = ("integer", "number", "string", "boolean", "date")


@dataclass(frozen=True)
class GeneratedCRD:
    group: str
    plural: str
    obj: dict[str, Any]
    kind: str = ""
    # The modules of every class and alias the CRD was built from (its kinds' included).
    modules: frozenset[str] = frozenset()

    @property
    def file_name(self) -> str:
        return f"{self.group}_{self.plural}.yaml"


@dataclass(frozen=True)
class CRDOptions:
    generator_version: str
    max_description_length: int | None = None


def kinds_by_crd(kinds: list[KindVersion]) -> dict[tuple[str, str], list[KindVersion]]:
    """The kind versions of each CRD, by (group, kind), in the order they were found."""
    by_kind: dict[tuple[str, str], list[KindVersion]] = defaultdict(list)
    for kind in kinds:
        by_kind[(kind.info.group, kind.info.kind)].append(kind)
    return by_kind


def build_crds(
    kinds: list[KindVersion],
    builder: SchemaBuilder,
    options: CRDOptions,
    skip: frozenset[tuple[str, str]] = frozenset(),
) -> list[GeneratedCRD]:
    """Group kind versions by (group, kind) and build one CRD for each (but those in `skip`), sorted by file
    name."""
    crds = []
    for (group, kind), versions in kinds_by_crd(kinds).items():
        if (group, kind) in skip:
            continue
        with builder.recording() as modules:
            crd = _build_crd(group, versions, builder, options)
        if crd is not None:
            own = {version.cls.__module__ for version in versions}
            crds.append(GeneratedCRD(crd.group, crd.plural, crd.obj, kind, frozenset(modules | own)))
    return sorted(crds, key=lambda crd: crd.file_name)


def _build_crd(
    group: str, versions: list[KindVersion], builder: SchemaBuilder, options: CRDOptions
) -> GeneratedCRD | None:
    """The CRD of one kind; None when every version of it is marked +kubebuilder:skipversion."""
    versions = [v for v in versions if not v.docs.has("kubebuilder:skipversion")]
    if not versions:
        return None
    order = sort_versions([v.info.version for v in versions])
    versions.sort(key=lambda v: order.index(v.info.version))
    _check_unique_versions(versions)
    names, scope = _names_and_scope(versions)
    entries = [_version_entry(v, builder, options) for v in versions]
    _set_storage(versions, entries)
    metadata: dict[str, Any] = {
        "annotations": {"pyop.io/generator-version": options.generator_version},
        "name": f"{names['plural']}.{group}",
    }
    for version in versions:
        _apply_metadata_marker(version, metadata)
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": {"group": group, "names": names, "scope": scope, "versions": entries},
    }
    return GeneratedCRD(group, names["plural"], crd)


def _check_unique_versions(versions: list[KindVersion]) -> None:
    seen: dict[str, KindVersion] = {}
    for version in versions:
        name = version.info.version
        if name in seen:
            raise MarkerError(
                f"kind {version.info.kind} version {name} is defined twice: in {seen[name].source} and {version.source}"
            )
        seen[name] = version


def _names_and_scope(versions: list[KindVersion]) -> tuple[dict[str, Any], str]:
    """Names and scope must agree across versions; markers override the class keywords and must not contradict."""
    resolved: dict[str, Any] = {}
    first = versions[0]
    kind = first.info.kind
    for version in versions:
        marker = version.docs.first("kubebuilder:resource")
        args = marker.value if marker else {}
        plural = args.get("path") or version.info.plural
        if marker and args.get("path") and args["path"] != version.info.plural and _explicit_plural(version):
            raise MarkerError(
                f"class {kind}: +kubebuilder:resource:path={args['path']} disagrees with plural="
                f"{version.info.plural!r} in the class keywords",
                marker.location,
            )
        keyword_scope = "Namespaced" if version.info.namespaced else "Cluster"
        scope = args.get("scope") or keyword_scope
        if scope not in ("Namespaced", "Cluster"):
            raise MarkerError(
                f"class {kind}: scope={scope} is not Namespaced or Cluster", marker.location if marker else None
            )
        if scope != keyword_scope:
            raise MarkerError(
                f"class {kind}: +kubebuilder:resource:scope={scope} disagrees with namespaced="
                f"{version.info.namespaced} in the class keywords (the runtime addresses the kind by the keyword)",
                marker.location if marker else None,
            )
        current = {
            "plural": plural,
            "singular": args.get("singular") or kind.lower(),
            "shortNames": args.get("shortName"),
            "categories": args.get("categories"),
            "scope": scope,
        }
        for key, value in current.items():
            if value is None:
                continue
            if key in resolved and resolved[key] != value:
                raise MarkerError(
                    f"kind {kind}: versions disagree on {key} ({resolved[key]!r} vs {value!r}); one CRD has one {key}",
                    marker.location if marker else None,
                )
            resolved[key] = value
    names: dict[str, Any] = {
        "kind": kind,
        "listKind": f"{kind}List",
        "plural": resolved["plural"],
        "singular": resolved["singular"],
    }
    if resolved.get("shortNames"):
        names["shortNames"] = list(resolved["shortNames"])
    if resolved.get("categories"):
        names["categories"] = list(resolved["categories"])
    return names, resolved["scope"]


def _explicit_plural(version: KindVersion) -> bool:
    from pyop.api.naming import default_plural

    return version.info.plural != default_plural(version.info.kind)


def _version_entry(version: KindVersion, builder: SchemaBuilder, options: CRDOptions) -> dict[str, Any]:
    schema = root_schema(version.cls, builder)
    if options.max_description_length is not None:
        truncate_descriptions(schema, options.max_description_length)
    entry: dict[str, Any] = {
        "name": version.info.version,
        "schema": {"openAPIV3Schema": schema},
        "served": not version.docs.has("kubebuilder:unservedversion"),
        "storage": False,
    }
    deprecated = version.docs.first("kubebuilder:deprecatedversion")
    if deprecated is not None:
        entry["deprecated"] = True
        if deprecated.value.get("warning"):
            entry["deprecationWarning"] = deprecated.value["warning"]
    subresources: dict[str, Any] = {}
    if version.docs.has("kubebuilder:subresource:status"):
        subresources["status"] = {}
    scale = version.docs.first("kubebuilder:subresource:scale")
    if scale is not None:
        subresources["scale"] = {
            key: value
            for key, value in (
                ("specReplicasPath", scale.value["specpath"]),
                ("statusReplicasPath", scale.value["statuspath"]),
                ("labelSelectorPath", scale.value.get("selectorpath")),
            )
            if value
        }
    if subresources:
        entry["subresources"] = subresources
    columns = [_printer_column(marker) for marker in version.docs.named("kubebuilder:printcolumn")]
    if columns:
        entry["additionalPrinterColumns"] = columns
    selectable = [{"jsonPath": m.value["JSONPath"]} for m in version.docs.named("kubebuilder:selectablefield")]
    if selectable:
        entry["selectableFields"] = selectable
    return entry


def root_schema(cls: type, builder: SchemaBuilder) -> Schema:
    """The schema of a kind: the model's object schema with the standard apiVersion/kind/metadata properties."""
    schema = builder.model_schema(cls)  # type: ignore[arg-type]
    properties = schema.setdefault("properties", {})
    properties["apiVersion"] = {"description": _API_VERSION_DOC, "type": "string"}
    properties["kind"] = {"description": _KIND_DOC, "type": "string"}
    properties["metadata"] = {"type": "object"}
    required = [name for name in schema.get("required", []) if name not in ("apiVersion", "kind", "metadata")]
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)
    return schema


def _printer_column(marker: Any) -> dict[str, Any]:
    args = marker.value
    if args["type"] not in PRINTER_COLUMN_TYPES:
        raise MarkerError(
            f"+kubebuilder:printcolumn type={args['type']} is not one of {', '.join(PRINTER_COLUMN_TYPES)}",
            marker.location,
        )
    column = {"jsonPath": args["JSONPath"], "name": args["name"], "type": args["type"]}
    for key in ("description", "format", "priority"):
        if args.get(key) not in (None, ""):
            column[key] = args[key]
    return column


def _set_storage(versions: list[KindVersion], entries: list[dict[str, Any]]) -> None:
    """Exactly one storage version: automatic for a single version, marked with +kubebuilder:storageversion else."""
    marked = [i for i, v in enumerate(versions) if v.docs.has("kubebuilder:storageversion")]
    kind = versions[0].info.kind
    if len(versions) == 1 and not marked:
        marked = [0]
    if not marked:
        names = ", ".join(v.info.version for v in versions)
        raise MarkerError(
            f"kind {kind} has versions {names} but no storage version: mark one with +kubebuilder:storageversion"
        )
    if len(marked) > 1:
        names = ", ".join(versions[i].info.version for i in marked)
        raise MarkerError(
            f"kind {kind} has several storage versions ({names}): keep +kubebuilder:storageversion on one",
            versions[marked[1]].docs.first("kubebuilder:storageversion").location,  # type: ignore[union-attr]
        )
    entries[marked[0]]["storage"] = True


def _apply_metadata_marker(version: KindVersion, metadata: dict[str, Any]) -> None:
    for marker in version.docs.named("kubebuilder:metadata"):
        for arg in ("annotations", "labels"):
            for pair in marker.value.get(arg) or []:
                name, sep, value = pair.partition("=")
                if not sep:
                    raise MarkerError(f"+kubebuilder:metadata {arg} entry {pair!r} is not key=value", marker.location)
                current = metadata.setdefault(arg, {})
                if current.get(name, value) != value:
                    raise MarkerError(
                        f"+kubebuilder:metadata sets {arg[:-1]} {name} to {value!r}, another marker of the kind to "
                        f"{current[name]!r}",
                        marker.location,
                    )
                current[name] = value


# Sentence terminals (Unicode STerm, the common ones): controller-gen cuts a long description after the last one.
_SENTENCE_ENDS = frozenset(".!?\u0589\u061f\u06d4\u0964\u0965\u3002\uff01\uff0e\uff1f\u203c\u203d\u2047\u2048\u2049")
_NO_DESCRIPTIONS_UNDER = ("enum", "default", "example", "x-kubernetes-validations")


def truncate_description(text: str, limit: int) -> str:
    """controller-gen's maxDescLen cut: at the last sentence end within `limit` characters, else at the last space
    with "...", else hard with "..." (so a cut description may be shorter than the limit)."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    sentence_end = max((i for i, char in enumerate(cut) if char in _SENTENCE_ENDS), default=-1)
    if sentence_end > 0:
        return cut[: sentence_end + 1]
    space = max((i for i, char in enumerate(cut) if char.isspace()), default=-1)
    if space > 0:
        return cut[:space] + "..."
    return cut + "..."


def truncate_descriptions(schema: Any, limit: int) -> None:
    """Apply maxDescLen to every description of a schema (0 drops them): the cure for CRDs too big to apply."""
    if isinstance(schema, dict):
        text = schema.get("description")
        if isinstance(text, str):
            if limit == 0:
                del schema["description"]
            else:
                schema["description"] = truncate_description(text, limit)
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                for child in value.values():
                    truncate_descriptions(child, limit)
            elif key not in _NO_DESCRIPTIONS_UNDER:
                truncate_descriptions(value, limit)
    elif isinstance(schema, list):
        for item in schema:
            truncate_descriptions(item, limit)
