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

__all__ = [
    "Condition",
    "GroupVersion",
    "KubeModel",
    "ListMeta",
    "ObjectMeta",
    "OwnerReference",
    "Resource",
    "ResourceInfo",
    "ResourceList",
    "default_plural",
    "pluralize",
]
