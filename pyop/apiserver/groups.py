"""What an aggregated API server serves: `APIGroupVersion`s of `Resource`s, each a pyop model and its strategy.

A model is a `pyop.api.Resource` subclass written as for a CRD (``group_version=``, ``+kubebuilder:`` markers above
the class: ``subresource:status``, ``printcolumn``, ``resource:scope=Cluster``, validation markers on fields). Its
schema is the one ``pyop make manifests`` generates for a CRD, built by the same walk
(``pyop_scaffold.manifests``, which ships in pyop-kit and needs no CLI dependency at run time), so pruning,
defaults, validation, ``/openapi/v2`` and ``/openapi/v3``, Table columns and discovery come from the machinery the
test API server uses for custom resources.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pyop.api.definitions import PINNED_KUBERNETES_VERSION
from pyop.apiserver.conversion import ConversionDefinitionError, HubConversion, hub_of
from pyop.apiserver.registry.resources import ResourceType, types_from_crd
from pyop.apiserver.strategy import Strategy, TypedStrategy


class ResourceDefinitionError(ValueError):
    """A model that cannot be served (no group_version, another group's kind, markers the walk refuses)."""


@dataclass
class Resource:
    """One kind of an API group version: its pyop model and, optionally, its typed `Strategy`."""

    model: type[Any]
    strategy: Strategy[Any] | None = None

    def __post_init__(self) -> None:
        info = getattr(self.model, "resource_info", None)
        if info is None or not isinstance(self.model, type):
            raise ResourceDefinitionError(
                f"{getattr(self.model, '__name__', self.model)!r} is not a pyop.api.Resource with group_version=...: "
                "derive the model from pyop.api.Resource and pass group_version=GroupVersion(group, version)"
            )

    @property
    def kind(self) -> str:
        return str(self.model.resource_info.kind)

    @property
    def plural(self) -> str:
        return str(self.model.resource_info.plural)


@dataclass
class APIGroupVersion:
    """A group version and the kinds it serves (k8s.io/apiserver's APIGroupInfo for one version)."""

    group: str
    version: str
    resources: Sequence[Resource] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.group or "." not in self.group:
            raise ResourceDefinitionError(
                f"group {self.group!r}: an aggregated API group must be a DNS subdomain with a dot (wardle.example.com)"
            )
        for resource in self.resources:
            info = resource.model.resource_info
            if (info.group, info.version) != (self.group, self.version):
                raise ResourceDefinitionError(
                    f"{resource.model.__name__} is {info.group}/{info.version}, not {self.group}/{self.version}: "
                    "put it in the APIGroupVersion of its own group_version"
                )

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}"


@dataclass(frozen=True)
class ServedKind:
    """A resource ready to serve: its CRD-shaped definition, its endpoint, its strategy adapter."""

    crd: dict[str, Any]
    resource_type: ResourceType
    strategy: TypedStrategy | None


def crd_for_model(model: type[Any], kubernetes_version: str = PINNED_KUBERNETES_VERSION) -> dict[str, Any]:
    """The CustomResourceDefinition ``pyop make manifests`` would write for this model (its one version; a kind's
    other versions are other models, joined by `served_kinds`)."""
    from pyop_scaffold.manifests.builtin import builtin_schema
    from pyop_scaffold.manifests.crd.assemble import CRDOptions, build_crds
    from pyop_scaffold.manifests.crd.docs import class_docs, package_markers
    from pyop_scaffold.manifests.crd.schema import SchemaBuilder
    from pyop_scaffold.manifests.errors import ManifestError, MarkerError
    from pyop_scaffold.manifests.loader import KindVersion, resource_info

    builder = SchemaBuilder(functools.partial(builtin_schema, kubernetes_version=kubernetes_version))
    try:
        docs = class_docs(model)
        info = resource_info(model, package_markers(model), docs)
        crds = build_crds([KindVersion(model, docs, docs_source(model), info)], builder, CRDOptions("pyop.apiserver"))
    except (ManifestError, MarkerError) as error:
        raise ResourceDefinitionError(f"{model.__name__}: {error}") from None
    if not crds:
        raise ResourceDefinitionError(f"{model.__name__} is marked +kubebuilder:skipversion: nothing to serve")
    crd = crds[0].obj
    crd["metadata"].pop("annotations", None)
    return crd


def docs_source(model: type[Any]) -> str:
    from pyop_scaffold.manifests.crd.docs import docs_path

    return docs_path(model)


def served_kinds(
    groups: Sequence[APIGroupVersion], kubernetes_version: str = PINNED_KUBERNETES_VERSION
) -> list[ServedKind]:
    """Every resource of every group version, with its endpoint and strategy. A kind served in several versions
    is stored in its hub's and converts through it (`pyop.apiserver.conversion`); one version served twice, a
    kind without exactly one hub, a spoke that does not convert, or versions that disagree on scope are refused."""
    served: list[ServedKind] = []
    versions: dict[str, list[tuple[Resource, ServedKind]]] = {}  # storage key -> its served versions
    for group in groups:
        for resource in group.resources:
            crd = crd_for_model(resource.model, kubernetes_version)
            (resource_type,) = types_from_crd(crd)
            others = versions.setdefault(resource_type.storage_key, [])
            if any(kind.resource_type.version == resource_type.version for _, kind in others):
                raise ResourceDefinitionError(f"{resource_type.plural}.{group.group_version} is served twice")
            for _, other in others:
                if (other.resource_type.kind, other.resource_type.namespaced) != (
                    resource_type.kind,
                    resource_type.namespaced,
                ):
                    raise ResourceDefinitionError(
                        f"{resource_type.plural}.{resource_type.group}: {resource.model.__name__} is not the same "
                        f"kind as the {other.resource_type.version} model (kind and scope must match across versions)"
                    )
            adapter = (
                TypedStrategy(resource.model, resource.strategy, resource_type.kind, resource_type.group)
                if resource.strategy is not None
                else None
            )
            kind = ServedKind(crd, resource_type, adapter)
            others.append((resource, kind))
            served.append(kind)
    converted = {key: _with_conversion(key, members) for key, members in versions.items() if len(members) > 1}
    return [converted.get(kind.resource_type.storage_key, {}).get(kind.resource_type.version, kind) for kind in served]


def _with_conversion(storage_key: str, members: list[tuple[Resource, ServedKind]]) -> dict[str, ServedKind]:
    """One kind's served versions, by version, stored in its hub's version and converted through it."""
    try:
        hub, spokes = hub_of([resource.model for resource, _ in members], storage_key)
        conversion = HubConversion(hub, spokes)
    except ConversionDefinitionError as error:
        raise ResourceDefinitionError(str(error)) from None
    storage = hub.resource_info.version
    return {
        kind.resource_type.version: dataclasses.replace(
            kind,
            resource_type=dataclasses.replace(kind.resource_type, storage_version=storage, conversion=conversion),
        )
        for _, kind in members
    }


__all__ = ["APIGroupVersion", "Resource", "ResourceDefinitionError", "ServedKind", "crd_for_model", "served_kinds"]
