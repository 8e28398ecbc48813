"""The kinds the test API server serves, and the discovery documents that describe them.

A ``ResourceType`` is one (group, version, resource) endpoint; versions of one CRD share
storage (``storage_key``), as they share an etcd prefix in a real cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pyop.api.selectors import FieldGetter, path_getter
from pyop.api.status import ApiError
from pyop.api.versions import version_priority as version_priority  # its home is pyop.api.versions
from pyop.apiserver.registry.conversion import Converter, webhook_conversion

if TYPE_CHECKING:
    from pyop.schema.compiled import CompiledSchema

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)


@dataclass(frozen=True)
class SpecialSubresource:
    """A subresource served by a handler of its own rather than the registry (a pod's `eviction`, `binding`,
    `log`), as discovery lists it: its kind (in ``group``/``version`` when not the resource's) and verbs."""

    name: str
    kind: str
    verbs: tuple[str, ...]
    group: str | None = None
    version: str | None = None

    def discovery_entry(self, plural: str, namespaced: bool) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": f"{plural}/{self.name}", "singularName": "", "namespaced": namespaced}
        if self.group is not None:
            entry["group"], entry["version"] = self.group, self.version
        entry["kind"], entry["verbs"] = self.kind, list(self.verbs)
        return entry


@dataclass(frozen=True)
class ScaleSpec:
    """Where the scale subresource reads and writes replicas (``.spec.replicas`` style paths)."""

    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str | None = None
    # Built-in kinds keep a LabelSelector struct at the path; CRDs keep the serialized string form.
    selector_is_struct: bool = False
    # A ReplicationController keeps a map of labels (its Scale's selector: labels.SelectorFromSet(...).String()).
    selector_is_map: bool = False


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    has_status: bool = False
    scale: ScaleSpec | None = None
    custom: bool = False
    storage_version: str = ""
    schema: Mapping[str, Any] | None = None
    # Extra field selector labels -> dotted object path (CRD selectableFields, built-in field labels).
    field_labels: Mapping[str, str] = field(default_factory=dict)
    crd_name: str = ""
    # A custom resource's additionalPrinterColumns (the Table columns after Name; none: Age).
    printer_columns: tuple[Mapping[str, Any], ...] = ()
    conversion: Converter | None = None  # across versions: a CRD's conversion webhook, an aggregated kind's hub
    finalize: bool = False  # the Namespace `finalize` subresource
    token: bool = False  # the ServiceAccount `token` subresource (TokenRequest)
    special_subresources: tuple[SpecialSubresource, ...] = ()  # served by the server's own handlers
    # Subresources read and written through the registry's get, update and patch of the object, with the kind's
    # per-subresource strategy (`RESTStrategy.subresource_strategy`): a pod's `ephemeralcontainers`, a CSR's
    # `approval`. Discovery lists them with the resource's kind and get/patch/update.
    update_subresources: tuple[str, ...] = ()
    # The group whose storage this resource is (None: its own): events.k8s.io's Events are the core Events, stored
    # as core/v1 and converted on the way in and out, as kube-apiserver serves one resource through both APIs.
    storage_group: str | None = None

    @cached_property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @cached_property
    def compiled_schema(self) -> CompiledSchema | None:
        """The schema compiled for writes (`pyop.schema.compiled`), on the first one. A changed CRD gives new
        ResourceTypes (`types_from_crd`), so the compiled form never outlives the schema it was built from."""
        if self.schema is None:
            return None
        from pyop.schema.compiled import CompiledSchema  # the schema engine loads with the first custom write

        return CompiledSchema(self.schema)

    @cached_property
    def storage_key(self) -> str:
        """One store per group-resource, shared by all served versions (and by the group that shares it)."""
        group = self.group if self.storage_group is None else self.storage_group
        return f"{self.plural}.{group}" if group else self.plural

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def create_only(self) -> bool:
        return self.verbs == CREATE_ONLY

    @property
    def allows_unconditional_update(self) -> bool:
        """Custom resources require metadata.resourceVersion on PUT; built-in kinds do not."""
        return not self.custom

    def field_getters(self) -> dict[str, FieldGetter]:
        getters: dict[str, FieldGetter] = {
            "metadata.name": path_getter("metadata.name"),
            "metadata.namespace": path_getter("metadata.namespace"),
        }
        for label, path in self.field_labels.items():
            getters[label] = path_getter(path)
        return getters

    def discovery_entries(self) -> list[dict[str, Any]]:
        entry: dict[str, Any] = {
            "name": self.plural,
            "singularName": self.singular or self.kind.lower(),
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(self.verbs),
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        if self.categories:
            entry["categories"] = list(self.categories)
        entries = [entry]
        if self.has_status:
            entries.append(
                {
                    "name": f"{self.plural}/status",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "kind": self.kind,
                    "verbs": ["get", "patch", "update"],
                }
            )
        if self.finalize:
            entries.append(
                {
                    "name": f"{self.plural}/finalize",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "kind": self.kind,
                    "verbs": ["update"],
                }
            )
        if self.token:
            entries.append(
                {
                    "name": f"{self.plural}/token",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "group": "authentication.k8s.io",
                    "version": "v1",
                    "kind": "TokenRequest",
                    "verbs": ["create"],
                }
            )
        entries.extend(special.discovery_entry(self.plural, self.namespaced) for special in self.special_subresources)
        entries.extend(
            {
                "name": f"{self.plural}/{name}",
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": self.kind,
                "verbs": ["get", "patch", "update"],
            }
            for name in self.update_subresources
        )
        if self.scale is not None:
            entries.append(
                {
                    "name": f"{self.plural}/scale",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "group": "autoscaling",
                    "version": "v1",
                    "kind": "Scale",
                    "verbs": ["get", "patch", "update"],
                }
            )
        return entries


def types_from_crd(crd: Mapping[str, Any]) -> list[ResourceType]:
    """One ResourceType per served version of a CustomResourceDefinition (apiextensions.k8s.io/v1)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, plural, kind = spec.get("group", ""), names.get("plural", ""), names.get("kind", "")
    versions = spec.get("versions") or []
    storage = next((v["name"] for v in versions if v.get("storage")), versions[0]["name"] if versions else "")
    conversion = webhook_conversion(crd)
    types = []
    for version in versions:
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        scale = subresources.get("scale")
        selectable = {
            item["jsonPath"].lstrip("."): item["jsonPath"].lstrip(".")
            for item in version.get("selectableFields") or []
            if item.get("jsonPath")
        }
        types.append(
            ResourceType(
                group=group,
                version=version["name"],
                plural=plural,
                kind=kind,
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                singular=names.get("singular") or kind.lower(),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                has_status="status" in subresources,
                scale=ScaleSpec(
                    scale.get("specReplicasPath", ".spec.replicas"),
                    scale.get("statusReplicasPath", ".status.replicas"),
                    scale.get("labelSelectorPath"),
                )
                if scale is not None
                else None,
                custom=True,
                storage_version=storage,
                schema=(version.get("schema") or {}).get("openAPIV3Schema"),
                field_labels=selectable,
                crd_name=(crd.get("metadata") or {}).get("name", ""),
                printer_columns=tuple(version.get("additionalPrinterColumns") or ()),
                conversion=conversion,
            )
        )
    return types


class ResourceRegistry:
    """Lookup of served endpoints plus the discovery documents built from them."""

    def __init__(self, builtins: Iterable[ResourceType]) -> None:
        """``builtins``: the built-in resources of the server's Kubernetes version
        (`pyop.testing.builtins.catalog.builtin_types`)."""
        self._by_endpoint: dict[tuple[str, str, str], ResourceType] = {}
        self._crd_endpoints: dict[str, list[tuple[str, str, str]]] = {}
        self.webhook_converted: set[str] = set()  # CRDs whose versions convert through a webhook
        for resource_type in builtins:
            self._add(resource_type)

    def _add(self, resource_type: ResourceType) -> None:
        key = (resource_type.group, resource_type.version, resource_type.plural)
        self._by_endpoint[key] = resource_type

    def lookup(self, group: str, version: str, plural: str) -> ResourceType:
        try:
            return self._by_endpoint[(group, version, plural)]
        except KeyError:
            raise ApiError(404, "the server could not find the requested resource") from None

    def find(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_endpoint.get((group, version, plural))

    def versions_of(self, storage_key: str) -> list[ResourceType]:
        return [rt for rt in self._by_endpoint.values() if rt.storage_key == storage_key]

    def versions_of_kind(self, group: str, kind: str) -> list[ResourceType]:
        """Every served version of a kind."""
        return [rt for rt in self._by_endpoint.values() if (rt.group, rt.kind) == (group, kind)]

    def for_kind(self, group: str, version: str, kind: str) -> ResourceType | None:
        """The served resource of a kind (an owner reference names a kind, not a resource)."""
        return next((rt for rt in self.versions_of_kind(group, kind) if rt.version == version), None)

    def serve_crd(self, name: str, types: list[ResourceType]) -> None:
        """(Re)register a CRD's versions; versions it no longer serves disappear."""
        self.unserve_crd(name)
        for resource_type in types:
            existing = self._by_endpoint.get((resource_type.group, resource_type.version, resource_type.plural))
            if existing is not None and not existing.custom:
                raise ApiError(409, f"{resource_type.plural}.{resource_type.group} is served by a built-in type")
            self._add(resource_type)
        self._crd_endpoints[name] = [(rt.group, rt.version, rt.plural) for rt in types]
        if any(rt.conversion is not None and rt.conversion.calls_out for rt in types):
            self.webhook_converted.add(name)

    def unserve_crd(self, name: str) -> None:
        self.webhook_converted.discard(name)
        for key in self._crd_endpoints.pop(name, []):
            self._by_endpoint.pop(key, None)

    # --- discovery --------------------------------------------------------------------------------

    def _group_versions(self) -> dict[str, list[str]]:
        groups: dict[str, set[str]] = {}
        for group, version, _ in self._by_endpoint:
            groups.setdefault(group, set()).add(version)
        return {group: sorted(versions, key=version_priority) for group, versions in groups.items()}

    def has_group_version(self, group: str, version: str) -> bool:
        return version in self._group_versions().get(group, [])

    def api_versions(self, server_address: str) -> dict[str, Any]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
        }

    def api_group(self, group: str) -> dict[str, Any]:
        versions = self._group_versions().get(group)
        if not versions or not group:
            raise ApiError(404, "the server could not find the requested resource")
        entries = [{"groupVersion": f"{group}/{version}", "version": version} for version in versions]
        return {
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": group,
            "versions": entries,
            "preferredVersion": entries[0],
        }

    def api_group_list(self) -> dict[str, Any]:
        groups = [self.api_group(group) for group in sorted(self._group_versions()) if group]
        for group in groups:
            group.pop("kind")
            group.pop("apiVersion")
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def resource_list(self, group: str, version: str) -> dict[str, Any]:
        types = sorted(
            (rt for (g, v, _), rt in self._by_endpoint.items() if g == group and v == version),
            key=lambda rt: rt.plural,
        )
        if not types:
            raise ApiError(404, "the server could not find the requested resource")
        resources = [entry for rt in types for entry in rt.discovery_entries()]
        group_version = f"{group}/{version}" if group else version
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": group_version,
            "resources": resources,
        }
