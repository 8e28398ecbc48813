"""PodSecurity admission (issue 12): a namespace's pod-security.kubernetes.io labels enforce, warn about and check
the Pod Security Standards as kube-apiserver does.

Expected texts are k8s.io/pod-security-admission's: the checks' reasons and details (policy/check_*.go and their
tests, e.g. `host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)`), AggregateCheckResult's `reason
(detail), ...`, `violates PodSecurity "restricted:latest": ...` under NewForbidden (403), warnings `would violate
PodSecurity "baseline:latest": ...`, namespace label errors `must be one of privileged, baseline, restricted`
(422) and the namespace-update warnings `existing pods in namespace "x" violate the new PodSecurity enforce level
"restricted:latest"` / `<pod> (and 1 other pod): <reasons>` as kubernetes.io's tutorials show them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pyop.testing import TestAPIServer
from testing_server.helpers import Api, deployment, official_client

RESTRICTED_MESSAGE = (
    'violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set '
    'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "app" must set '
    'securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "app" must set '
    'securityContext.runAsNonRoot=true), seccompProfile (pod or container "app" must set '
    'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'
)
HARDENED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
}


def pod(name: str, container: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    app = {"name": "app", "image": "busybox:1.36", **(container or {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [app], **spec}}


async def namespace(api: Api, name: str, **labels: str) -> str:
    full = {f"pod-security.kubernetes.io/{mode}": value for mode, value in labels.items()}
    await api.create_ok("/api/v1/namespaces", {"metadata": {"name": name, "labels": full}})
    return f"/api/v1/namespaces/{name}/pods"


def warning_texts(values: list[str]) -> list[str]:
    """The texts of `299 - "<text>"` Warning headers (quotes and backslashes escaped, as kube writes them)."""
    texts = []
    for value in values:
        assert value.startswith('299 - "') and value.endswith('"'), value
        texts.append(value[7:-1].replace('\\"', '"').replace("\\\\", "\\"))
    return texts


async def post_with_warnings(api: Api, path: str, body: Any) -> tuple[int, Any, list[str]]:
    async with api.session.post(path, json=body) as response:
        return response.status, await response.json(), warning_texts(response.headers.getall("Warning", []))


async def test_enforce_restricted_refuses_a_plain_pod_in_kubes_words(api: Api) -> None:
    pods = await namespace(api, "locked", enforce="restricted")
    code, body = await api.post(pods, pod("plain"))
    assert code == 403 and body["reason"] == "Forbidden"
    assert body["message"] == f'pods "plain" is forbidden: {RESTRICTED_MESSAGE}'
    assert body["details"] == {"name": "plain", "kind": "pods"}
    code, _ = await api.post(pods, pod("hardened", {"securityContext": HARDENED}))
    assert code == 201
    # A pod-level runAsNonRoot and seccompProfile cover every container.
    pod_level = {"runAsNonRoot": True, "seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"}}
    container_level = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
    }
    code, _ = await api.post(pods, pod("pod-level", {"securityContext": container_level}, securityContext=pod_level))
    assert code == 201


async def test_enforce_baseline_names_each_violation(api: Api) -> None:
    pods = await namespace(api, "base", enforce="baseline")
    body = pod(
        "host",
        {
            "securityContext": {"privileged": True, "capabilities": {"add": ["SYS_ADMIN", "NET_ADMIN"]}},
            "ports": [{"containerPort": 80, "hostPort": 8080}],
        },
        hostNetwork=True,
        hostPID=True,
        hostIPC=True,
        volumes=[{"name": "root", "hostPath": {"path": "/"}}],
    )
    code, answer = await api.post(pods, body)
    assert code == 403
    assert answer["message"] == (
        'pods "host" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "app" '
        'must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add), host namespaces '
        '(hostNetwork=true, hostPID=true, hostIPC=true), hostPath volumes (volume "root"), hostPort (container "app" '
        'uses hostPort 8080), privileged (container "app" must not set securityContext.privileged=true)'
    )
    code, _ = await api.post(pods, pod("plain"))  # baseline allows what restricted refuses
    assert code == 201


async def test_warn_mode_admits_with_a_warning_header(api: Api) -> None:
    pods = await namespace(api, "warned", enforce="baseline", warn="restricted")
    code, body, warnings = await post_with_warnings(api, pods, pod("plain"))
    assert code == 201, body
    assert warnings == ["would " + RESTRICTED_MESSAGE.replace("violates", "violate", 1)]
    code, _, warnings = await post_with_warnings(api, pods, pod("hardened", {"securityContext": HARDENED}))
    assert code == 201 and warnings == []


async def test_workloads_get_warnings_never_refusals(api: Api) -> None:
    await namespace(api, "apps", enforce="restricted")
    code, body, warnings = await post_with_warnings(api, "/apis/apps/v1/namespaces/apps/deployments", deployment("web"))
    assert code == 201, body
    assert len(warnings) == 1 and warnings[0].startswith('would violate PodSecurity "restricted:latest": ')
    assert 'allowPrivilegeEscalation != false (container "main" must set' in warnings[0]
    # Its pods would be refused: the test server has no ReplicaSet controller, a cluster's would log the 403.
    code, body = await api.post("/api/v1/namespaces/apps/pods", pod("from-template"))
    assert code == 403


async def test_versions_pin_the_checks(api: Api) -> None:
    pods = await namespace(api, "old", **{"enforce": "restricted", "enforce-version": "v1.22"})
    secured = {**HARDENED, "runAsUser": 0}
    code, _ = await api.post(pods, pod("root", {"securityContext": secured}))
    assert code == 201  # runAsUser=0 is refused from v1.23 on
    pods = await namespace(api, "new", enforce="restricted", **{"enforce-version": "v1.30"})
    code, body = await api.post(pods, pod("root", {"securityContext": secured}))
    assert code == 403
    assert body["message"] == (
        'pods "root" is forbidden: violates PodSecurity "restricted:v1.30": runAsUser=0 (container "app" must not '
        "set runAsUser=0)"
    )


async def test_namespace_labels_are_validated(api: Api) -> None:
    body = {"metadata": {"name": "typo", "labels": {"pod-security.kubernetes.io/enforce": "strict"}}}
    code, answer = await api.post("/api/v1/namespaces", body)
    assert code == 422 and answer["reason"] == "Invalid"
    assert answer["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "strict": must be one of privileged, baseline, restricted',
            "field": "metadata.labels[pod-security.kubernetes.io/enforce]",
        }
    ]
    body = {"metadata": {"name": "typo", "labels": {"pod-security.kubernetes.io/warn-version": "1.30"}}}
    code, answer = await api.post("/api/v1/namespaces", body)
    assert (
        code == 422 and answer["details"]["causes"][0]["message"] == 'Invalid value: "1.30": must be "latest" or "v1.x"'
    )


async def test_enforcing_on_a_namespace_warns_about_its_pods(api: Api) -> None:
    pods = await namespace(api, "team")
    for name in ("a", "b"):
        await api.create_ok(pods, pod(name))
    await api.create_ok(pods, pod("c", {"securityContext": {**HARDENED, "runAsNonRoot": False}}))
    labels = {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}}
    async with api.session.patch(
        "/api/v1/namespaces/team", data=json.dumps(labels), headers={"Content-Type": "application/merge-patch+json"}
    ) as response:
        assert response.status == 200
        warnings = warning_texts(response.headers.getall("Warning", []))
    assert warnings == [
        'existing pods in namespace "team" violate the new PodSecurity enforce level "restricted:latest"',
        "a (and 1 other pod): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, "
        "seccompProfile",
        "c: runAsNonRoot != true",
    ]


# --- clients nobody here wrote ---------------------------------------------------------------------------


async def test_kubectl_shows_the_refusal_and_the_warnings(server: TestAPIServer, api: Api, tmp_path: Path) -> None:
    import shutil

    from testing_server.kubectl.helpers import Kubectl

    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl is not on PATH")
    kubectl = Kubectl(binary, server, tmp_path)
    await kubectl("create", "namespace", "k")
    await api.create_ok("/api/v1/namespaces/k/pods", pod("old"))
    labeled = await kubectl("label", "namespace", "k", "pod-security.kubernetes.io/enforce=restricted")
    assert labeled.stderr.splitlines() == [
        'Warning: existing pods in namespace "k" violate the new PodSecurity enforce level "restricted:latest"',
        "Warning: old: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, "
        "seccompProfile",
    ]
    refused = await kubectl("-n", "k", "create", "-f", "-", stdin=json.dumps(pod("new")), check=False)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f'Error from server (Forbidden): error when creating "STDIN": pods "new" is forbidden: {RESTRICTED_MESSAGE}'
    )
    applied = await kubectl("-n", "k", "apply", "-f", "-", stdin=json.dumps(deployment("web")))
    assert applied.stderr.startswith('Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation')
    assert "deployment.apps/web created" in applied.stdout


async def test_official_client_reads_the_refusal(server: TestAPIServer, api: Api) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    await namespace(api, "official", enforce="restricted")
    core = kubernetes.client.CoreV1Api(official_client(server))

    def run() -> Any:
        try:
            core.create_namespaced_pod("official", pod("plain"))
        except kubernetes.client.ApiException as error:
            return error
        raise AssertionError("the pod was admitted")

    refused = await asyncio.to_thread(run)
    assert refused.status == 403
    assert json.loads(refused.body)["message"] == f'pods "plain" is forbidden: {RESTRICTED_MESSAGE}'
