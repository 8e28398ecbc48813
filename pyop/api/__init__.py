"""Model base types that generated API modules import: `from pyop.api import Resource, KubeModel, ...`.

Typed models of the built-in Kubernetes kinds live in `pyop.api.k8s` (`from pyop.api.k8s.apps.v1 import
Deployment`), loaded only when imported.
"""

from pyop.api.builtin_types import Duration, IntOrString, MicroTime, Quantity, Time
from pyop.api.model import (
    Condition,
    GroupVersion,
    KubeModel,
    ListMeta,
    ManagedFieldsEntry,
    ObjectMeta,
    OwnerReference,
    Resource,
    ResourceInfo,
    ResourceList,
    wire_aliases,
)
from pyop.api.naming import default_plural, pluralize
from pyop.api.types import Int32, Int64, SchemaFormat

__all__ = [
    "Condition",
    "Duration",
    "GroupVersion",
    "Int32",
    "Int64",
    "IntOrString",
    "KubeModel",
    "ListMeta",
    "ManagedFieldsEntry",
    "MicroTime",
    "ObjectMeta",
    "OwnerReference",
    "Quantity",
    "Resource",
    "ResourceInfo",
    "ResourceList",
    "SchemaFormat",
    "Time",
    "default_plural",
    "pluralize",
    "wire_aliases",
]
