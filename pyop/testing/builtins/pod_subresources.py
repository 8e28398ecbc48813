"""Pod subresources that are not plain registry writes: `eviction`, `binding` and `log`, as kube-apiserver's pod
REST storage answers them (pkg/registry/core/pod/storage).

- `POST pods/<name>/eviction` (policy/v1 Eviction): the PodDisruptionBudget that selects the pod decides. No
  budget, or a pod that is already terminating, terminal or pending: the pod is deleted. One budget: 429
  while its status is older than its spec (no disruption controller has looked at it yet) or when it allows no
  disruption, else the pod is deleted and the budget's `disruptionsAllowed` goes down by one with the pod listed
  in `disruptedPods`. More than one budget: 500. Success is a 201 Status.
- `POST pods/<name>/binding` (v1 Binding, what a scheduler sends): sets `spec.nodeName` and the PodScheduled
  condition; 409 when the pod is bound already.
- `GET pods/<name>/log`: what a kubelet would stream. The test server has no kubelets: a test sets a container's
  log with `PodLogs.set` (`TestAPIServer.pod_logs`); an unscheduled pod has none (kube answers an empty body),
  and the container name is checked as kube checks it. `tailLines` and `limitBytes` apply.

The test server runs no disruption controller (envtest runs none either): a test writes the budget's status
itself, as it writes a Deployment's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from aiohttp import web

from pyop.api.selectors import labels_match, parse_label_selector, selector_from_label_selector
from pyop.api.status import ApiError, StatusCause, bad_request, conflict, not_found
from pyop.apiserver.registry.operations import Operations, WriteOptions

PDB_KEY: Final = "poddisruptionbudgets.policy"
MANAGER: Final = "kube-apiserver"
_TERMINAL: Final = ("Succeeded", "Failed")


def _success() -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _pod(operations: Operations, namespace: str, name: str) -> dict[str, Any]:
    pod = operations.store.get("pods", namespace, name)
    if pod is None:
        raise not_found("pods", "", name)
    return pod


def _check_body(body: Any, kind: str, name: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise bad_request(f"the request body must be a {kind} object")
    body_name = (body.get("metadata") or {}).get("name")
    if body_name and body_name != name:
        raise bad_request(f"name in URL does not match name in {kind} object")
    return body


# --- eviction -------------------------------------------------------------------------------------


def evict(operations: Operations, namespace: str, name: str, body: Any) -> dict[str, Any]:
    """Answer a policy/v1 Eviction of pod ``name`` (201 Status), deleting the pod when its budget allows."""
    eviction = _check_body(body, "Eviction", name)
    pod = _pod(operations, namespace, name)
    delete_options = dict(eviction.get("deleteOptions") or {})
    if not _budget_applies(pod):
        _delete_pod(operations, namespace, name, delete_options)
        return _success()
    budgets = [b for b in operations.store.objects(PDB_KEY, namespace) if _selects(b, pod)]
    if len(budgets) > 1:
        raise ApiError(
            500, "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
        )
    if budgets:
        _take_disruption(operations, budgets[0], name)
    _delete_pod(operations, namespace, name, delete_options)
    return _success()


def _budget_applies(pod: dict[str, Any]) -> bool:
    """A pod being deleted, finished or not yet running is evicted whatever its budget says (canIgnorePDB)."""
    phase = (pod.get("status") or {}).get("phase")
    return not (pod["metadata"].get("deletionTimestamp") or phase in _TERMINAL or phase == "Pending")


def _selects(budget: dict[str, Any], pod: dict[str, Any]) -> bool:
    selector = (budget.get("spec") or {}).get("selector")
    if selector is None:  # policy/v1: a nil selector selects nothing, an empty one everything
        return False
    return labels_match(parse_label_selector(selector_from_label_selector(selector)), pod)


def _too_many_requests(budget: dict[str, Any], message: str) -> ApiError:
    name = budget["metadata"]["name"]
    cause = StatusCause("DisruptionBudget", message.format(name=name), "")
    return ApiError(
        429,
        "Cannot evict pod as it would violate the pod's disruption budget.",
        reason="TooManyRequests",
        causes=[cause],
    )


def _take_disruption(operations: Operations, budget: dict[str, Any], pod_name: str) -> None:
    status = budget.get("status") or {}
    metadata = budget["metadata"]
    if int(status.get("observedGeneration") or 0) < int(metadata.get("generation") or 0):
        raise _too_many_requests(budget, "The disruption budget {name} is still being processed by the server.")
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise ApiError(403, "pdb disruptions allowed is negative", reason="Forbidden")
    if allowed == 0:
        healthy, desired = status.get("currentHealthy", 0), status.get("desiredHealthy", 0)
        raise _too_many_requests(
            budget, f"The disruption budget {{name}} needs {desired} healthy pods and has {healthy} currently"
        )
    updated = {
        **budget,
        "status": {
            **status,
            "disruptionsAllowed": allowed - 1,
            "disruptedPods": {**(status.get("disruptedPods") or {}), pod_name: operations.now()},
        },
    }
    budget_type = operations.resources.lookup("policy", "v1", "poddisruptionbudgets")
    operations.update(
        budget_type,
        metadata.get("namespace", ""),
        metadata["name"],
        updated,
        WriteOptions(field_manager=MANAGER),
        subresource="status",
    )


def _delete_pod(operations: Operations, namespace: str, name: str, delete_options: dict[str, Any]) -> None:
    pods = operations.resources.lookup("", "v1", "pods")
    operations.delete(pods, namespace, name, delete_options, WriteOptions(field_manager=MANAGER))


# --- binding --------------------------------------------------------------------------------------


def bind(operations: Operations, namespace: str, name: str, body: Any) -> dict[str, Any]:
    """Answer a v1 Binding (201 Status): the pod is assigned to the target node, once."""
    binding = _check_body(body, "Binding", name)
    target = binding.get("target") or {}
    if target.get("kind") not in (None, "", "Node"):
        raise bad_request(f"the binding target kind must be Node, not {target.get('kind')!r}")
    node = target.get("name") or ""
    if not node:
        raise bad_request("the binding target needs a node name")
    pod = _pod(operations, namespace, name)
    if pod["metadata"].get("deletionTimestamp"):
        raise conflict("pods/binding", "", name, f"pod {name} is being deleted, cannot be assigned to a host")
    bound = (pod.get("spec") or {}).get("nodeName")
    if bound:
        raise conflict("pods/binding", "", name, f'pod {name} is already assigned to node "{bound}"')
    pods = operations.resources.lookup("", "v1", "pods")
    annotations = {
        **(pod["metadata"].get("annotations") or {}),
        **((binding.get("metadata") or {}).get("annotations") or {}),
    }
    spec_update = {
        **pod,
        "metadata": {**pod["metadata"], "annotations": annotations} if annotations else pod["metadata"],
    }
    spec_update["spec"] = {**pod["spec"], "nodeName": node}
    options = WriteOptions(field_manager=MANAGER)
    assigned = operations.update(pods, namespace, name, spec_update, options)
    status = dict(assigned.get("status") or {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append(
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": operations.now()}
    )
    operations.update(
        pods,
        namespace,
        name,
        {**assigned, "status": {**status, "conditions": conditions}},
        options,
        subresource="status",
    )
    return _success()


# --- log ------------------------------------------------------------------------------------------


@dataclass
class PodLogs:
    """What each container of a pod has written, as a kubelet would stream it (set by tests)."""

    texts: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def set(self, namespace: str, pod: str, container: str, text: str) -> None:
        """Make ``text`` the log of ``container`` in pod ``namespace/pod`` (replacing what was there)."""
        self.texts[(namespace, pod, container)] = text

    def append(self, namespace: str, pod: str, container: str, text: str) -> None:
        self.texts[(namespace, pod, container)] = self.texts.get((namespace, pod, container), "") + text

    def get_log(self, operations: Operations, namespace: str, name: str, query: Any) -> web.StreamResponse:
        """The `GET pods/<name>/log` answer (text/plain)."""
        pod = _pod(operations, namespace, name)
        container = validate_container(pod, query.get("container") or "")
        if not (pod.get("spec") or {}).get("nodeName"):
            return web.Response(body=b"", content_type="text/plain")
        text = self.texts.get((namespace, name, container), "")
        tail = _int(query, "tailLines")
        if tail is not None:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[-tail:]) if tail else ""
        data = text.encode()
        limit = _int(query, "limitBytes")
        if limit is not None:
            data = data[:limit]
        return web.Response(body=data, content_type="text/plain")


def validate_container(pod: dict[str, Any], requested: str) -> str:
    """The container a log or stream request addresses, as kube's `validateContainer` (pod strategy) picks and
    checks it: the named one if the pod has it, else the pod's only container. A pod's
    `kubectl.kubernetes.io/default-container` annotation is kubectl's to read, before it sends the request."""
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    if requested:
        names = [
            c["name"] for key in ("containers", "initContainers", "ephemeralContainers") for c in spec.get(key) or []
        ]
        if requested not in names:
            raise bad_request(f"container {requested} is not valid for pod {name}")
        return requested
    regular = [c["name"] for c in spec.get("containers") or []]
    if len(regular) == 1:
        return regular[0]
    if not regular:
        raise bad_request(f"a container name must be specified for pod {name}")
    message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(regular)}]"
    init = [c["name"] for c in spec.get("initContainers") or []]
    if init:
        message += f" or one of the init containers: [{' '.join(init)}]"
    raise bad_request(message)


def _int(query: Any, name: str) -> int | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"{name}: invalid value {raw!r}: must be an integer") from None
    if value < 0:
        raise bad_request(f"{name}: invalid value {value}: must be greater than or equal to 0")
    return value
