"""`kubectl get events.events.k8s.io` lists the Events written through core/v1, as on a cluster (one resource,
two APIs)."""

from __future__ import annotations

from testing_server.helpers import Api
from testing_server.kubectl.helpers import Kubectl


async def test_kubectl_lists_a_core_event_through_events_v1(api: Api, kubectl: Kubectl) -> None:
    event = {
        "metadata": {"name": "web.1"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
        "reason": "Started",
        "message": "started container",
        "type": "Normal",
    }
    await api.create_ok("/api/v1/namespaces/default/events", event)
    listed = await kubectl("get", "events.v1.events.k8s.io", "-n", "default", "-o", "name")
    assert listed.stdout.split() == ["event.events.k8s.io/web.1"]
    shown = await kubectl("get", "events.v1.events.k8s.io", "web.1", "-n", "default", "-o", "jsonpath={.note}")
    assert shown.stdout == "started container"
