"""Which requests the Pod plugins look at: creates (and updates) of pods themselves, not their subresources."""

from __future__ import annotations

from pyop.apiserver.admission.plugins import Attributes
from pyop.apiserver.registry.resources import ResourceType

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def is_pod_request(operation: str, resource_type: ResourceType, subresource: str, *operations: str) -> bool:
    """Whether the request is one of ``operations`` on pods themselves (a plugin's `may_handle`)."""
    return resource_type.group == "" and resource_type.plural == "pods" and not subresource and operation in operations


def is_pod_write(attributes: Attributes, *operations: str) -> bool:
    return is_pod_request(attributes.operation, attributes.resource_type, attributes.subresource, *operations)
