"""What the client needs to address a kind over REST, and how model classes declare it.

A model class says which resource it is in one of three ways, checked in this order:

1. a registration: `register_model(ConfigMapModel, BUILTIN["v1/ConfigMap"])` (classes that cannot declare it
   themselves; pyop's own built-in models, `pyop.api.k8s`, declare it and need none);
2. a class attribute `resource_info` (or `resource`) holding any object with `group`, `version`, `kind`,
`plural`
   and `namespaced` attributes: pyop's `pyop.api.Resource` models set it from their class keywords;
3. class variables `__group__`, `__version__`, `__kind__`, `__plural__`, `__namespaced__`.

The client only reads these attributes (duck typing), so it does not import the model package.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from pyop.api.paths import check_path_segment


@runtime_checkable
class ResourceInfoLike(Protocol):
    """The attributes a model's resource description must have."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool


@dataclass(frozen=True)
class APIResource:
    """One REST resource: the result of a REST mapping (group/version/kind -> plural and scope)."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def base_path(self) -> str:
        """`/api/v1` for the core group, `/apis/<group>/<version>` otherwise."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        """The URL path of the collection (no name) or of one object, optionally of a subresource.

        `namespace=None` on a namespaced resource addresses all namespaces (list and watch only). The namespace,
        name and subresource must each be one path segment (`pyop.api.paths`): a name such as `../../secrets/x`
        or `x?dryRun=All` raises `InvalidPathSegment` (a ValueError) before any request is built, as client-go's
        request builder refuses it.
        """
        parts = [self.base_path]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{check_path_segment(namespace, 'namespace')}")
        elif self.namespaced and name is not None:
            raise ValueError(f"{self.kind} is namespaced: a namespace is required to address {name!r}")
        parts.append(self.plural)
        if name is not None:
            if not name:
                raise ValueError(f"empty name for {self.kind}")
            parts.append(check_path_segment(name, f"{self.kind} name"))
            if subresource:
                parts.append(check_path_segment(subresource, "subresource"))
        elif subresource:
            raise ValueError(f"subresource {subresource!r} of {self.kind} needs an object name")
        return "/".join(parts)

    @classmethod
    def of(cls, info: ResourceInfoLike) -> APIResource:
        if isinstance(info, APIResource):
            return info
        return cls(info.group, info.version, info.kind, info.plural, bool(info.namespaced))


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> (`apps`, `v1`); `v1` -> (``, `v1`)."""
    group, _, version = api_version.rpartition("/")
    return group, version


def _builtin_resources() -> dict[str, APIResource]:
    """Every root kind of the generated built-in models (`pyop.api.k8s`), keyed `apiVersion/Kind`.

    Read from the models' index (a table of tuples), not the models, so the client imports no model module.
    """
    from pyop.api.k8s._index import ROOT_KINDS

    table = {
        f"{group}/{version}/{kind}" if group else f"{version}/{kind}": APIResource(group, version, kind, plural, scoped)
        for group, version, kind, plural, scoped, _ in ROOT_KINDS
    }
    # The scale subresource's kind, addressed through its parent's `/scale`.
    table["autoscaling/v1/Scale"] = APIResource("autoscaling", "v1", "Scale", "scale")
    return table


# Built-in kinds of the Kubernetes version pyop's models were generated for (`pyop.api.k8s.KUBERNETES_VERSION`);
# keyed `apiVersion/Kind`. Lets typed clients address them without discovery; anything else is mapped through
# discovery (`pyop.client.discovery.RESTMapper`).
BUILTIN: dict[str, APIResource] = _builtin_resources()

_REGISTRY: dict[type, APIResource] = {}


def register_model(model: type[BaseModel], resource: ResourceInfoLike | str) -> None:
    """Tell the typed client which resource a model class is (for classes that cannot declare it themselves).

    `resource` may be a `BUILTIN` key such as `"apps/v1/Deployment"`.
    """
    _REGISTRY[model] = BUILTIN[resource] if isinstance(resource, str) else APIResource.of(resource)
    _RESOLVED.clear()


def is_builtin(resource: APIResource) -> bool:
    """Whether a resource is a built-in kind (strategic merge patch works only for those)."""
    return f"{resource.api_version}/{resource.kind}" in BUILTIN


def resource_for_model(model: type[Any]) -> APIResource:
    """The REST resource a model class stands for; raises TypeError when the class does not say.

    Answers are remembered per class (every typed call asks, and the protocol check costs ~30 us).
    """
    resolved = _RESOLVED.get(model)
    if resolved is None:
        resolved = _RESOLVED[model] = _resource_for_model(model)
    return resolved


_RESOLVED: weakref.WeakKeyDictionary[type[Any], APIResource] = weakref.WeakKeyDictionary()


def _resource_for_model(model: type[Any]) -> APIResource:
    for klass in getattr(model, "__mro__", (model,)):
        if klass in _REGISTRY:
            return _REGISTRY[klass]
    for attribute in ("resource_info", "resource"):
        info = getattr(model, attribute, None)
        if info is not None and isinstance(info, ResourceInfoLike):
            return APIResource.of(info)
    kind = getattr(model, "__kind__", None)
    if isinstance(kind, str):
        return APIResource(
            group=str(getattr(model, "__group__", "")),
            version=str(model.__version__),
            kind=kind,
            plural=str(getattr(model, "__plural__", "") or _default_plural(kind)),
            namespaced=bool(getattr(model, "__namespaced__", True)),
        )
    raise TypeError(
        f"{getattr(model, '__name__', model)!r} does not declare its resource: set `resource_info`, the "
        "`__group__/__version__/__kind__/__plural__/__namespaced__` class variables, or call register_model()"
    )


def _default_plural(kind: str) -> str:
    """Kubebuilder's plural of a kind, from the model package (one rule for scaffolder and client)."""
    try:
        from pyop.api.naming import default_plural
    except ImportError:  # pragma: no cover - the model package ships with pyop
        return kind.lower() + "s"
    return str(default_plural(kind))
