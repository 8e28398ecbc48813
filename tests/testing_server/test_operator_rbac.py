"""End to end: a scaffolded project's generated RBAC (config/rbac/role.yaml from `make manifests`) installed in the
test server, its manager's ServiceAccount token, and the 403 a missing `+kubebuilder:rbac` marker causes; the
marker added and `make manifests` re-run, the same request is allowed. Also the workload status helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from typer.testing import CliRunner

from pyop.testing import TestAPIServer
from pyop.testing.workloads import complete_job, fail_job, mark_deployment_available
from pyop_scaffold.cli.app import app
from testing_server.helpers import Api, connector

SA_USER = "system:serviceaccount:system:controller-manager"
PODS_MARKER = "# +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch\n"


def _pyop(*args: str, cwd: Path) -> None:
    result = CliRunner().invoke(app, [*args, "--project-dir", str(cwd)])
    assert result.exit_code == 0, (args, result.stdout, result.stderr)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    _pyop("init", "--domain", "example.com", cwd=root)
    _pyop("create", "api", "--group", "shop", "--version", "v1", "--kind", "Cart", cwd=root)
    _pyop("make", "manifests", cwd=root)
    return root


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


async def _install_rbac(api: Api, project: Path) -> None:
    """What `make deploy` applies for RBAC: the manager's ClusterRole and its binding (namespace `system` before
    kustomize's prefix, as the raw files say)."""
    for document in _documents(project / "config/rbac/role.yaml"):
        name = document["metadata"]["name"]
        status, _ = await api.get(f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}")
        if status == 200:
            status, body = await api.put(f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}", document)
            assert status == 200, body
        else:
            await api.create_ok("/apis/rbac.authorization.k8s.io/v1/clusterroles", document)


async def test_a_missing_rbac_marker_is_the_403_a_cluster_gives(server: TestAPIServer, api: Api, project: Path) -> None:
    server.load_crds(project / "config/crd/bases")
    await api.create_ok("/api/v1/namespaces", {"metadata": {"name": "system"}})
    await api.create_ok("/api/v1/namespaces/system/serviceaccounts", {"metadata": {"name": "controller-manager"}})
    await _install_rbac(api, project)
    for binding in _documents(project / "config/rbac/role_binding.yaml"):
        await api.create_ok("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)
    token = server.token_for_service_account("system", "controller-manager")
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session:
        manager = Api(session)
        status, _ = await manager.get("/apis/shop.example.com/v1/carts")
        assert status == 200  # the markers the scaffold wrote
        status, body = await manager.get("/api/v1/namespaces/default/pods")
        assert status == 403
        assert body["message"] == (
            f'pods is forbidden: User "{SA_USER}" cannot list resource "pods" in API group "" in the namespace '
            '"default"'
        )
        controller = project / "shop/controllers/cart_controller.py"
        text = controller.read_text()
        anchor = "# +kubebuilder:rbac:groups=shop.example.com,resources=carts,verbs="
        controller.write_text(text.replace(anchor, PODS_MARKER + anchor, 1))
        _pyop("make", "manifests", cwd=project)
        await _install_rbac(api, project)
        status, _ = await manager.get("/api/v1/namespaces/default/pods")
        assert status == 200
        status, _ = await manager.post("/api/v1/namespaces/default/pods", {"metadata": {"name": "p"}})
        assert status == 403  # get/list/watch only


async def test_workload_status_helpers(server: TestAPIServer, api: Api) -> None:
    deployment = {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
    }
    await api.create_ok("/apis/apps/v1/namespaces/default/deployments", deployment)
    available = mark_deployment_available(server, "default", "web")
    assert available["status"]["availableReplicas"] == 3
    assert available["status"]["observedGeneration"] == available["metadata"]["generation"] == 1
    _, stored = await api.get("/apis/apps/v1/namespaces/default/deployments/web")
    conditions = {c["type"]: (c["status"], c["reason"]) for c in stored["status"]["conditions"]}
    assert conditions == {
        "Available": ("True", "MinimumReplicasAvailable"),
        "Progressing": ("True", "NewReplicaSetAvailable"),
    }
    job = {
        "metadata": {"name": "migrate"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}},
    }
    await api.create_ok("/apis/batch/v1/namespaces/default/jobs", job)
    done = complete_job(server, "default", "migrate")
    assert done["status"]["succeeded"] == 1 and done["status"]["completionTime"]
    assert [c["type"] for c in done["status"]["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    await api.create_ok("/apis/batch/v1/namespaces/default/jobs", {**job, "metadata": {"name": "broken"}})
    failed = fail_job(server, "default", "broken", reason="DeadlineExceeded", message="too slow")
    assert [(c["type"], c["reason"]) for c in failed["status"]["conditions"]] == [
        ("FailureTarget", "DeadlineExceeded"),
        ("Failed", "DeadlineExceeded"),
    ]
    assert failed["metadata"]["generation"] == 1  # a status write does not bump it
