"""Model base types that generated API modules import: `from pyop.api import Resource, KubeModel, ...`."""

from pyop.api.model import (
    Condition,
    GroupVersion,
    KubeModel,
    ListMeta,
    ObjectMeta,
    OwnerReference,
    Resource,
    ResourceInfo,
    ResourceList,
)
from pyop.api.naming import default_plural, pluralize
from pyop.api.types import Int32, Int64, SchemaFormat

__all__ = [
    "Condition",
    "GroupVersion",
    "Int32",
    "Int64",
    "KubeModel",
    "ListMeta",
    "ObjectMeta",
    "OwnerReference",
    "Resource",
    "ResourceInfo",
    "ResourceList",
    "SchemaFormat",
    "default_plural",
    "pluralize",
]
