"""End to end: a scaffolded project's generated RBAC (config/rbac/role.yaml from `make manifests`) installed in the
test server, its manager's ServiceAccount token, and the 403 a missing `+kubebuilder:rbac` marker causes; the
marker added and `make manifests` re-run, the same request is allowed. Also the workload status helpers."""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from typer.testing import CliRunner

from pyop.controller import find_status_condition
from pyop.manager import Manager, ManagerOptions
from pyop.testing import TestAPIServer
from pyop.testing.workloads import complete_job, fail_job, mark_deployment_available
from pyop_scaffold.cli.app import app
from testing_server.helpers import Api, connector

SA_USER = "system:serviceaccount:system:controller-manager"
PODS_MARKER = "# +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch\n"
CONFIGMAPS_MARKER = "# +kubebuilder:rbac:groups=core,resources=configmaps,verbs=list\n"
CARTS_MARKER = "# +kubebuilder:rbac:groups=shop.example.com,resources=carts,verbs="


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


async def _install_manager_identity(server: TestAPIServer, api: Api, project: Path) -> str:
    """The manager's namespace, ServiceAccount, ClusterRole and binding (`system` before kustomize's prefix, as
    the raw files say); returns the ServiceAccount's token."""
    await api.create_ok("/api/v1/namespaces", {"metadata": {"name": "system"}})
    await api.create_ok("/api/v1/namespaces/system/serviceaccounts", {"metadata": {"name": "controller-manager"}})
    await _install_rbac(api, project)
    for binding in _documents(project / "config/rbac/role_binding.yaml"):
        await api.create_ok("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)
    return server.token_for_service_account("system", "controller-manager")


def _add_marker(controller: Path, marker: str) -> None:
    text = controller.read_text()
    controller.write_text(text.replace(CARTS_MARKER, marker + CARTS_MARKER, 1))


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
    token = await _install_manager_identity(server, api, project)
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
        _add_marker(project / "shop/controllers/cart_controller.py", PODS_MARKER)
        _pyop("make", "manifests", cwd=project)
        await _install_rbac(api, project)
        status, _ = await manager.get("/api/v1/namespaces/default/pods")
        assert status == 200
        status, _ = await manager.post("/api/v1/namespaces/default/pods", {"metadata": {"name": "p"}})
        assert status == 403  # get/list/watch only


@pytest.fixture
def lister_project(tmp_path: Path) -> Iterator[Path]:
    """A project whose Cart reconciler also lists the ConfigMaps of the Cart's namespace, with no marker for it;
    importable (its package on sys.path) so a test can run its manager."""
    root = tmp_path / "rbacshop"
    root.mkdir()
    _pyop("init", "--domain", "example.com", cwd=root)
    _pyop("create", "api", "--group", "shop", "--version", "v1", "--kind", "Cart", cwd=root)
    controller = root / "rbacshop/controllers/cart_controller.py"
    text = controller.read_text()
    text = text.replace(
        "from pyop.controller import",
        "from pyop.api.k8s.core.v1 import ConfigMap\nfrom pyop.controller import",
        1,
    )
    text = text.replace(
        "        # TODO(user): your logic here",
        "        await self.client.list(ConfigMap, request.namespace)\n        # TODO(user): your logic here",
        1,
    )
    controller.write_text(text)
    _pyop("make", "manifests", cwd=root)
    sys.path.insert(0, str(root))
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name == "rbacshop" or name.startswith("rbacshop.")]:
            del sys.modules[name]


async def test_the_manager_as_its_service_account_meets_the_missing_marker(
    server: TestAPIServer, api: Api, lister_project: Path
) -> None:
    """The scaffolded manager, run with its ServiceAccount's token and the generated ClusterRole: its list of
    ConfigMaps is refused (403) and the Cart never becomes Available, until the marker is added, `make manifests`
    re-run and the new role applied; the retried reconcile then succeeds."""
    server.load_crds(lister_project / "config/crd/bases")
    token = await _install_manager_identity(server, api, lister_project)
    controller = importlib.import_module("rbacshop.controllers.cart_controller")
    cart_types = importlib.import_module("rbacshop.api.v1.cart_types")
    manager = Manager(ManagerOptions(config=server.client_config(token=token), handle_signals=False))
    controller.setup_with_manager(manager)
    sample = yaml.safe_load((lister_project / "config/samples/shop_v1_cart.yaml").read_text())
    server.reset_requests()
    async with manager:
        await api.create_ok("/apis/shop.example.com/v1/namespaces/default/carts", sample)
        async with asyncio.timeout(30):  # a guard against a hang only
            while not any(r.status == 403 and r.resource == "configmaps" for r in server.requests):
                await asyncio.sleep(0.05)
        name = sample["metadata"]["name"]
        cart = await manager.client.get(cart_types.Cart, name, "default")
        assert cart.status is None or find_status_condition(cart.status.conditions, "Available") is None
        _add_marker(lister_project / "rbacshop/controllers/cart_controller.py", CONFIGMAPS_MARKER)
        _pyop("make", "manifests", cwd=lister_project)
        await _install_rbac(api, lister_project)
        async with asyncio.timeout(60):  # the retry comes after the controller's backoff
            while True:
                cart = await manager.client.get(cart_types.Cart, name, "default")
                condition = find_status_condition(cart.status.conditions if cart.status else None, "Available")
                if condition is not None and condition.status == "True":
                    break
                await asyncio.sleep(0.05)
    assert any(r.status == 200 and r.resource == "configmaps" and r.verb == "list" for r in server.requests)


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
