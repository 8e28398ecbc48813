"""The DefaultTolerationSeconds admission plugin (plugin/pkg/admission/defaulttolerationseconds), on Pod creates.

A pod that does not already tolerate the `node.kubernetes.io/not-ready` and `node.kubernetes.io/unreachable`
NoExecute taints (a toleration with that key or no key, and that effect or none) gets a toleration of each for
300 seconds: how long it stays bound to a node that stops reporting before it is evicted.
"""

from __future__ import annotations

from typing import Any, Final

from pyop.apiserver.admission.plugins import CREATE, Attributes
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.storage.store import Store
from pyop.testing.admission.pods import is_pod_request, is_pod_write

NOT_READY: Final = "node.kubernetes.io/not-ready"
UNREACHABLE: Final = "node.kubernetes.io/unreachable"
DEFAULT_SECONDS: Final = 300


def _tolerates(tolerations: list[dict[str, Any]], key: str) -> bool:
    return any(
        toleration.get("key", "") in ("", key) and toleration.get("effect", "") in ("", "NoExecute")
        for toleration in tolerations
    )


class DefaultTolerationSeconds:
    name = "DefaultTolerationSeconds"

    def may_handle(self, operation: str, resource_type: ResourceType, subresource: str) -> bool:
        return is_pod_request(operation, resource_type, subresource, CREATE)

    def handles(self, attributes: Attributes) -> bool:
        return is_pod_write(attributes, CREATE)

    def admit(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None:
        spec = obj.setdefault("spec", {})
        tolerations = list(spec.get("tolerations") or [])
        added = [
            {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": DEFAULT_SECONDS}
            for key in (NOT_READY, UNREACHABLE)
            if not _tolerates(tolerations, key)
        ]
        if added:
            spec["tolerations"] = tolerations + added
