"""kubectl's commands that write through the update subresources: `kubectl debug` (pods/ephemeralcontainers, a
strategic merge patch of the pod's ephemeral containers) and `kubectl scale rc` (replicationcontrollers/scale).

`kubectl debug -i` then waits for the ephemeral container to run and attaches to it; the test server has no
kubelet, so the test writes the container's running status itself and answers the attach (pod_streams).
"""

from __future__ import annotations

import asyncio

from pyop.testing import TestAPIServer
from testing_server.helpers import Api, eventually
from testing_server.kubectl.helpers import Kubectl

PODS = "/api/v1/namespaces/default/pods"
RCS = "/api/v1/namespaces/default/replicationcontrollers"


async def test_kubectl_debug_adds_an_ephemeral_container(api: Api, kubectl: Kubectl) -> None:
    spec = {"containers": [{"name": "app", "image": "nginx"}]}
    await api.create_ok(PODS, {"metadata": {"name": "web-1"}, "spec": spec})
    result = await kubectl("debug", "web-1", "--image=busybox", "--target=app", "--container=debugger")
    assert result.stdout.startswith('Targeting container "app".'), result.stdout
    status, pod = await api.get(f"{PODS}/web-1")
    [debugger] = pod["spec"]["ephemeralContainers"]
    assert (debugger["name"], debugger["image"], debugger["targetContainerName"]) == ("debugger", "busybox", "app")
    assert debugger["imagePullPolicy"] == "Always"


async def test_kubectl_scale_rc_writes_through_the_scale_subresource(api: Api, kubectl: Kubectl) -> None:
    labels = {"app": "web"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
    await api.create_ok(
        RCS, {"metadata": {"name": "web"}, "spec": {"replicas": 1, "selector": labels, "template": template}}
    )
    result = await kubectl("scale", "rc", "web", "--replicas=4")
    assert "scaled" in result.stdout
    status, stored = await api.get(f"{RCS}/web")
    assert stored["spec"]["replicas"] == 4
    assert any(e.get("subresource") == "scale" for e in stored["metadata"]["managedFields"])


async def test_kubectl_certificate_approve_then_deny(api: Api, kubectl: Kubectl) -> None:
    from testing_server.test_csr_approval import CSRS, make_csr

    await make_csr(api)
    result = await kubectl("certificate", "approve", "web")
    assert "approved" in result.stdout
    status, csr = await api.get(f"{CSRS}/web")
    [condition] = csr["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == ("Approved", "True", "KubectlApprove")
    refused = await kubectl("certificate", "deny", "web", check=False)  # kubectl refuses before it sends
    assert 'certificate signing request "web" is already Approved' in refused.stderr


async def test_kubectl_debug_interactive_attaches_once_the_container_runs(
    server: TestAPIServer, api: Api, kubectl: Kubectl
) -> None:
    """`kubectl debug -i`: the patch, then a watch until the ephemeral container runs (a test plays the kubelet by
    writing its status), then an attach to it (the test's attach handler)."""
    from pyop.testing.builtins.pod_streaming import ExecSession
    from testing_server.kubectl.test_pod_exec_kubectl import run
    from testing_server.test_pod_exec import make_pod

    async def debugger(session: ExecSession) -> None:
        assert session.stdin is not None
        session.stdout.write(b"debugger read " + await session.stdin.read())

    await make_pod(api, "web-1", "app")
    server.pod_streams.on_attach("default", "web-1", "debugger", debugger)
    started = asyncio.create_task(
        run(kubectl, "debug", "-i", "web-1", "--image=busybox", "--container=debugger", stdin=b"hello\n")
    )

    async def added() -> bool:
        status, pod = await api.get(f"{PODS}/web-1")
        return bool(pod["spec"].get("ephemeralContainers"))

    await eventually(added, "kubectl debug to add the ephemeral container")
    status, pod = await api.get(f"{PODS}/web-1")
    running = {
        "name": "debugger",
        "image": "busybox",
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
    }
    pod["status"]["ephemeralContainerStatuses"] = [running]
    assert (await api.put(f"{PODS}/web-1/status", pod))[0] == 200
    result = await started
    assert result.returncode == 0, result.stderr
    assert "debugger read hello" in result.stdout
