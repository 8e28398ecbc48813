"""Pod subresources as kube-apiserver answers them (issue 12: "pod log/exec/eviction/binding"): `eviction` decided
by the PodDisruptionBudget, `binding` as a scheduler sends it, `log` as a kubelet would stream it.

Statuses, reasons and messages are kube-apiserver's (pkg/registry/core/pod/storage/eviction.go, storage.go).
"""

from __future__ import annotations

from typing import Any

from pyop.testing import TestAPIServer
from testing_server.helpers import Api

PODS = "/api/v1/namespaces/default/pods"
PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"


def pod(name: str, *containers: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels or {"app": "web"}},
        "spec": {"containers": [{"name": c, "image": "busybox:1.36"} for c in containers or ("app",)]},
    }


def eviction(name: str) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": "default"}}


async def _running(api: Api, name: str, **labels: str) -> dict[str, Any]:
    created = await api.create_ok(PODS, pod(name, labels=labels or None))
    status, running = await api.put(f"{PODS}/{name}/status", {**created, "status": {"phase": "Running"}})
    assert status == 200, running
    return running


async def _budget(api: Api, name: str, allowed: int, *, observed: bool = True) -> dict[str, Any]:
    body = {"metadata": {"name": name}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
    created = await api.create_ok(PDBS, body)
    if not observed:
        return created
    status = {
        "observedGeneration": created["metadata"]["generation"],
        "disruptionsAllowed": allowed,
        "currentHealthy": 1,
        "desiredHealthy": 1,
        "expectedPods": 1,
    }
    code, updated = await api.put(f"{PDBS}/{name}/status", {**created, "status": status})
    assert code == 200, updated
    return updated


async def test_a_pod_without_a_budget_is_evicted(api: Api) -> None:
    await _running(api, "web-1")
    status, answer = await api.post(f"{PODS}/web-1/eviction", eviction("web-1"))
    assert status == 201, answer
    assert answer == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    status, _ = await api.get(f"{PODS}/web-1")
    assert status == 404


async def test_a_budget_that_allows_a_disruption_records_it(api: Api) -> None:
    await _running(api, "web-1")
    await _budget(api, "web", allowed=1)
    status, answer = await api.post(f"{PODS}/web-1/eviction", eviction("web-1"))
    assert status == 201, answer
    status, budget = await api.get(f"{PDBS}/web")
    assert budget["status"]["disruptionsAllowed"] == 0
    assert list(budget["status"]["disruptedPods"]) == ["web-1"]
    status, _ = await api.get(f"{PODS}/web-1")
    assert status == 404


async def test_a_budget_with_no_disruption_left_answers_429_and_keeps_the_pod(api: Api) -> None:
    await _running(api, "web-1")
    await _budget(api, "web", allowed=0)
    status, answer = await api.post(f"{PODS}/web-1/eviction", eviction("web-1"))
    assert status == 429, answer
    assert answer["reason"] == "TooManyRequests"
    assert answer["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert answer["details"]["causes"] == [
        {"reason": "DisruptionBudget", "message": "The disruption budget web needs 1 healthy pods and has 1 currently"}
    ]
    status, _ = await api.get(f"{PODS}/web-1")
    assert status == 200


async def test_a_budget_no_controller_has_observed_yet_answers_429(api: Api) -> None:
    await _running(api, "web-1")
    await _budget(api, "web", allowed=1, observed=False)
    status, answer = await api.post(f"{PODS}/web-1/eviction", eviction("web-1"))
    assert status == 429
    assert (
        answer["details"]["causes"][0]["message"] == "The disruption budget web is still being processed by the server."
    )


async def test_a_pending_pod_is_evicted_whatever_its_budget(api: Api) -> None:
    await api.create_ok(PODS, pod("pending"))
    await _budget(api, "web", allowed=0)
    status, answer = await api.post(f"{PODS}/pending/eviction", eviction("pending"))
    assert status == 201, answer


async def test_two_budgets_for_one_pod_are_a_500(api: Api) -> None:
    await _running(api, "web-1")
    await _budget(api, "first", allowed=1)
    await _budget(api, "second", allowed=1)
    status, answer = await api.post(f"{PODS}/web-1/eviction", eviction("web-1"))
    assert status == 500
    assert "more than one PodDisruptionBudget" in answer["message"]


async def test_eviction_errors(api: Api) -> None:
    status, answer = await api.post(f"{PODS}/ghost/eviction", eviction("ghost"))
    assert (status, answer["message"]) == (404, 'pods "ghost" not found')
    await _running(api, "web-1")
    status, answer = await api.post(f"{PODS}/web-1/eviction", eviction("other"))
    assert (status, answer["message"]) == (400, "name in URL does not match name in Eviction object")
    status, _ = await api.post("/apis/apps/v1/namespaces/default/deployments/web/eviction", eviction("web"))
    assert status == 404  # only pods have the subresource


async def test_binding_assigns_the_node_once(api: Api) -> None:
    await api.create_ok(PODS, pod("web-1"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web-1"},
        "target": {"kind": "Node", "name": "node-a"},
    }
    status, answer = await api.post(f"{PODS}/web-1/binding", binding)
    assert status == 201, answer
    status, bound = await api.get(f"{PODS}/web-1")
    assert bound["spec"]["nodeName"] == "node-a"
    scheduled = [c for c in bound["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert [c["status"] for c in scheduled] == ["True"]

    status, answer = await api.post(f"{PODS}/web-1/binding", {**binding, "target": {"kind": "Node", "name": "node-b"}})
    assert status == 409
    assert answer["message"] == (
        'Operation cannot be fulfilled on pods/binding "web-1": pod web-1 is already assigned to node "node-a"'
    )


async def test_log_of_an_unscheduled_pod_is_empty_and_a_scheduled_one_streams_what_the_test_set(
    server: TestAPIServer, api: Api
) -> None:
    await api.create_ok(PODS, pod("web-1"))
    async with api.session.get(f"{PODS}/web-1/log") as response:
        assert (response.status, await response.text()) == (200, "")
    server.pod_logs.set("default", "web-1", "app", "one\ntwo\nthree\n")
    binding = {"metadata": {"name": "web-1"}, "target": {"kind": "Node", "name": "node-a"}}
    assert (await api.post(f"{PODS}/web-1/binding", binding))[0] == 201
    async with api.session.get(f"{PODS}/web-1/log") as response:
        assert response.status == 200 and response.content_type == "text/plain"
        assert await response.text() == "one\ntwo\nthree\n"
    async with api.session.get(f"{PODS}/web-1/log", params={"tailLines": "2", "limitBytes": "5"}) as response:
        assert await response.text() == "two\nt"


async def test_log_needs_a_container_name_when_the_pod_has_several(api: Api) -> None:
    await api.create_ok(PODS, pod("duo", "app", "sidecar"))
    status, answer = await api.get(f"{PODS}/duo/log")
    assert status == 400
    assert answer["message"] == "a container name must be specified for pod duo, choose one of: [app sidecar]"
    status, answer = await api.get(f"{PODS}/duo/log", container="nope")
    assert (status, answer["message"]) == (400, "container nope is not valid for pod duo")
