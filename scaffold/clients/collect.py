"""The project's kinds with a `+genclient` tag, read through the marker registry as `make manifests` reads them.

Every problem is one `file:line:` line, and all of them are reported at once: a `genclient:` tag on a class that is
not a kind, a tag without `+genclient`, `+genclient:nonNamespaced` on a namespaced kind, an extra method whose
types do not import. The kind's group is its `group_version=` (or the package's `+groupName`), as for its CRD.
"""

from __future__ import annotations

from pathlib import Path

from pyop_scaffold.clients.model import ClientKind, TypeRef, extras_from_tags, verbs_from_tags
from pyop_scaffold.manifests.errors import ManifestError, MarkerError
from pyop_scaffold.manifests.loader import KindVersion, api_module_names, load_kinds
from pyop_scaffold.manifests.markers.comments import read_module_docs
from pyop_scaffold.manifests.markers.parser import ParsedMarker


def _is_client_tag(marker: ParsedMarker) -> bool:
    return marker.name == "genclient" or marker.name.startswith("genclient:")


def collect_client_kinds(root: Path, package: str) -> list[ClientKind]:
    """The kinds to generate clients for; call inside `imported_project(root, package)`."""
    kinds = load_kinds(root, package)
    problems: list[str] = []
    found: list[ClientKind] = []
    tagged_kinds: set[tuple[str, str]] = set()
    for kind in kinds:
        markers = [m for m in kind.docs.markers if _is_client_tag(m)]
        if not markers:
            continue
        tagged_kinds.add((kind.source, kind.cls.__qualname__))
        try:
            client = _client_kind(kind, markers)
        except MarkerError as error:
            problems.append(str(error))
            continue
        if client is not None:
            found.append(client)
    problems += _tags_on_other_classes(root, package, tagged_kinds)
    if problems:
        raise ManifestError(problems)
    return found


def _client_kind(kind: KindVersion, markers: list[ParsedMarker]) -> ClientKind | None:
    name = kind.cls.__name__
    main = next((m for m in markers if m.name == "genclient"), None)
    if main is None or main.value is False:
        if main is None:
            raise MarkerError(
                f"+{markers[0].written_name} on class {name} needs +genclient (no other tag counts without it)",
                markers[0].location,
            )
        return None
    scope = next((m for m in markers if m.name == "genclient:nonNamespaced" and m.value), None)
    if scope is not None and kind.info.namespaced:
        raise MarkerError(
            f"+genclient:nonNamespaced on class {name}, a namespaced kind: make the kind cluster-scoped "
            "(+kubebuilder:resource:scope=Cluster or namespaced=False) or drop the tag",
            scope.location,
        )
    if kind.cls.__qualname__ != name:
        raise MarkerError(
            f"class {kind.cls.__qualname__} must be defined at module level to get a client", main.location
        )
    own = TypeRef(kind.cls.__module__, name)
    verbs = verbs_from_tags(markers, "status" in getattr(kind.cls, "model_fields", {}), f"class {name}")
    return ClientKind(
        group=kind.info.group,
        version=kind.info.version,
        kind=kind.info.kind,
        plural=kind.info.plural,
        namespaced=kind.info.namespaced,
        model=own,
        verbs=verbs,
        extras=extras_from_tags(markers, own, verbs, f"class {name}"),
        source=kind.source,
    )


def _tags_on_other_classes(root: Path, package: str, kinds: set[tuple[str, str]]) -> list[str]:
    """A `+genclient` tag on a class that is not a kind would be ignored: an error naming the class."""
    problems = []
    for _, path in api_module_names(root, package):
        source = str(path.relative_to(root))
        for qualname, block in read_module_docs(path).classes.items():
            tag = next((m for m in block.markers if _is_client_tag(m)), None)
            if tag is not None and (source, qualname) not in kinds:
                problems.append(
                    f"{tag.location}: +{tag.written_name} on class {qualname}, which is not a kind (a "
                    "pyop.api.Resource with a group); only kinds get clients"
                )
    return problems
