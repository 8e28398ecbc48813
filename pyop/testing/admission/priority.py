"""The Priority admission plugin (plugin/pkg/admission/priority), on Pod creates.

`spec.priority` is the value of the PriorityClass `spec.priorityClassName` names (and `preemptionPolicy` the
class's, when the pod sets none); without a class name it is the global default class's value, or 0 when no
class is `globalDefault`. A class that does not exist, or a `spec.priority` that disagrees with the class, is a
403. kube-apiserver creates the two system classes at start-up (`system-node-critical`,
`system-cluster-critical`); `bootstrap_priority_classes` gives the test server the same.
"""

from __future__ import annotations

from typing import Any, Final

from pyop.api.status import forbidden
from pyop.apiserver.admission.plugins import CREATE, Attributes
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.storage.store import Store
from pyop.testing.admission.pods import is_pod_request, is_pod_write

STORAGE_KEY: Final = "priorityclasses.scheduling.k8s.io"
PREEMPT_LOWER_PRIORITY: Final = "PreemptLowerPriority"
SYSTEM_CLASSES: Final = (
    (
        "system-node-critical",
        2000001000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2000000000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
)


def system_priority_classes() -> list[dict[str, Any]]:
    """The classes kube-apiserver's `scheduling/bootstrap-system-priority-classes` post-start hook creates."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "description": description,
        }
        for name, value, description in SYSTEM_CLASSES
    ]


def install_priority_classes(operations: Operations) -> None:
    """Create the system classes (at server start, before any client)."""
    class_type = operations.resources.lookup("scheduling.k8s.io", "v1", "priorityclasses")
    for body in system_priority_classes():
        operations.create(class_type, "", body, WriteOptions(field_manager="kube-apiserver"))


class Priority:
    name = "Priority"

    def may_handle(self, operation: str, resource_type: ResourceType, subresource: str) -> bool:
        return is_pod_request(operation, resource_type, subresource, CREATE)

    def handles(self, attributes: Attributes) -> bool:
        return is_pod_write(attributes, CREATE)

    def admit(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None:
        spec = obj.setdefault("spec", {})
        class_name = spec.get("priorityClassName") or ""
        if class_name:
            priority_class = store.get(STORAGE_KEY, "", class_name)
            if priority_class is None:
                raise forbidden("pods", "", attributes.name, f"no PriorityClass with name {class_name} was found")
        else:
            priority_class = next((c for c in store.objects(STORAGE_KEY) if c.get("globalDefault")), None)
            if priority_class is not None:
                spec["priorityClassName"] = priority_class["metadata"]["name"]
        value = int(priority_class.get("value", 0)) if priority_class is not None else 0
        policy = (priority_class or {}).get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY
        if spec.get("priority") is not None and spec["priority"] != value:
            raise forbidden(
                "pods",
                "",
                attributes.name,
                f"the integer value of priority ({spec['priority']}) must not be provided in pod spec; priority "
                f"admission controller computed {value} from the given PriorityClass name",
            )
        spec["priority"] = value
        if spec.get("preemptionPolicy") not in (None, policy):
            raise forbidden(
                "pods",
                "",
                attributes.name,
                f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must not be provided in pod "
                f"spec; priority admission controller computed {policy} from the given PriorityClass name",
            )
        spec["preemptionPolicy"] = policy
