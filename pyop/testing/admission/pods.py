"""Which requests the Pod plugins look at: creates (and updates) of pods themselves, not their subresources."""

from __future__ import annotations

from pyop.apiserver.admission.plugins import Attributes

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def is_pod_write(attributes: Attributes, *operations: str) -> bool:
    resource_type = attributes.resource_type
    return (
        resource_type.group == ""
        and resource_type.plural == "pods"
        and not attributes.subresource
        and attributes.operation in operations
    )
