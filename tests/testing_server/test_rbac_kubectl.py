"""kubectl against the test server's RBAC and built-in groups: a refused `get` (kubectl prints kube-apiserver's
403 message) until a role is bound, and `api-resources` (discovery of the built-in groups, short names,
categories)."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from pyop.testing import TestAPIServer
from pyop.testing.kubeconfig import kubeconfig_dict, write_kubeconfig
from testing_server.helpers import Api

SA_USER = "system:serviceaccount:team:robot"


@pytest.fixture
def kubectl_path() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not on PATH")
    return found


async def _kubectl(binary: str, kubeconfig: Path, home: Path, *args: str) -> tuple[int, str, str]:
    """kubectl as a subprocess (awaited: the server runs in this event loop), with its own HOME and cache."""
    env = {**os.environ, "HOME": str(home), "KUBECONFIG": str(kubeconfig)}
    process = await asyncio.create_subprocess_exec(
        binary,
        *args,
        "--cache-dir",
        str(home / "cache"),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(60):  # a guard against a hang only
        out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.fixture
async def robot_kubeconfig(server: TestAPIServer, api: Api, tmp_path: Path) -> Path:
    if not server.url.startswith("https://"):
        pytest.skip("kubectl sends no bearer token over plain http")
    await api.create_ok("/api/v1/namespaces", {"metadata": {"name": "team"}})
    await api.create_ok("/api/v1/namespaces/team/serviceaccounts", {"metadata": {"name": "robot"}})
    token = server.token_for_service_account("team", "robot")
    ca_data = server.certificate.ca_data if server.certificate else None
    return write_kubeconfig(tmp_path / "robot.kubeconfig", kubeconfig_dict(server.url, token, "team", ca_data))


async def test_kubectl_meets_the_403_until_a_role_is_bound(
    server: TestAPIServer, api: Api, kubectl_path: str, robot_kubeconfig: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    code, out, err = await _kubectl(kubectl_path, robot_kubeconfig, home, "get", "pods")
    assert code == 1
    assert (
        "Error from server (Forbidden): "
        f'pods is forbidden: User "{SA_USER}" cannot list resource "pods" in API group "" in the namespace "team"'
    ) in err
    await api.create_ok(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings",
        {
            "metadata": {"name": "robot-view"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "team"}],
        },
    )
    code, out, err = await _kubectl(kubectl_path, robot_kubeconfig, home, "get", "pods", "-o", "name")
    assert (code, out) == (0, ""), err
    code, out, err = await _kubectl(kubectl_path, robot_kubeconfig, home, "delete", "configmap", "x")
    assert code == 1
    assert f'configmaps "x" is forbidden: User "{SA_USER}" cannot delete resource "configmaps"' in err


async def test_kubectl_api_resources_lists_the_built_in_groups(
    server: TestAPIServer, kubectl_path: str, tmp_path: Path
) -> None:
    if not server.url.startswith("https://"):
        pytest.skip("kubectl sends no bearer token over plain http")
    home = tmp_path / "home"
    home.mkdir()
    code, out, err = await _kubectl(kubectl_path, server.kubeconfig_path, home, "api-resources", "-o", "wide")
    assert code == 0, err
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert "deploy" in rows["deployments"].split() and "all" in rows["deployments"]
    for plural in ("roles", "clusterrolebindings", "ingresses", "poddisruptionbudgets", "horizontalpodautoscalers"):
        assert plural in rows, plural
    code, out, _ = await _kubectl(kubectl_path, server.kubeconfig_path, home, "api-resources", "--categories", "all")
    assert code == 0
    names = {line.split()[0] for line in out.splitlines()[1:]}
    assert names == {
        "pods",
        "replicationcontrollers",
        "services",
        "daemonsets",
        "deployments",
        "replicasets",
        "statefulsets",
        "horizontalpodautoscalers",
        "cronjobs",
        "jobs",
    }
