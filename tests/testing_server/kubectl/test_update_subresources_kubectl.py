"""kubectl's commands that write through the update subresources: `kubectl debug` (pods/ephemeralcontainers, a
strategic merge patch of the pod's ephemeral containers) and `kubectl scale rc` (replicationcontrollers/scale).

`kubectl debug -it` then waits for the ephemeral container to run and attaches to it; the test server has no
kubelet to start it, so the interactive form waits forever here, as it would on a cluster with no running node.
"""

from __future__ import annotations

from testing_server.helpers import Api
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
