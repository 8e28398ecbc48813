"""Every built-in group and kind of the server's Kubernetes version, served from the definitions (discovery, verbs,
subresources, short names, categories, field selectors), as a default kube-apiserver of that version serves them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pyop.testing import TestAPIServer
from pyop.testing.builtins.catalog import builtin_types
from pyop_scaffold.codegen import builtin_endpoints
from testing_server.helpers import Api

ENDPOINTS_MODULE = Path(__file__).resolve().parents[2] / "pyop" / "testing" / "builtins" / "_endpoints.py"


def _resources(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in document["resources"]}


def test_generated_endpoints_are_current() -> None:
    """Regenerate with `python -m pyop_scaffold.codegen.builtin_endpoints pyop/testing/builtins/_endpoints.py`."""
    assert ENDPOINTS_MODULE.read_text(encoding="utf-8") == builtin_endpoints.render()
    assert builtin_endpoints.main(["--check", str(ENDPOINTS_MODULE)]) == 0


def test_check_mode_reports_a_stale_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "_endpoints.py"
    stale.write_text("ENDPOINTS = ()\n")
    assert builtin_endpoints.main(["--check", str(stale)]) == 1
    assert "stale" in capsys.readouterr().err
    assert stale.read_text() == "ENDPOINTS = ()\n"


async def test_groups_of_the_issue_are_discoverable(api: Api) -> None:
    status, groups = await api.get("/apis")
    assert status == 200
    served = {group["name"]: group["preferredVersion"]["version"] for group in groups["groups"]}
    for group in (
        "apps",
        "batch",
        "rbac.authorization.k8s.io",
        "networking.k8s.io",
        "policy",
        "autoscaling",
        "discovery.k8s.io",
        "storage.k8s.io",
        "scheduling.k8s.io",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "node.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "apiregistration.k8s.io",
    ):
        assert group in served, group
    assert served["autoscaling"] == "v2"
    # A default kube-apiserver serves no alpha or beta version (KEP-3136).
    assert all(version.rstrip("0123456789") == "v" for version in served.values())
    _, core = await api.get("/api/v1")
    core_resources = _resources(core)
    for plural in ("persistentvolumeclaims", "endpoints", "nodes", "persistentvolumes", "limitranges"):
        assert plural in core_resources, plural


async def test_discovery_entries_match_kube_apiserver(api: Api) -> None:
    _, apps = await api.get("/apis/apps/v1")
    resources = _resources(apps)
    assert resources["deployments"]["shortNames"] == ["deploy"]
    assert resources["deployments"]["categories"] == ["all"]
    assert resources["deployments/scale"]["group"] == "autoscaling"
    assert resources["deployments/scale"]["kind"] == "Scale"
    assert resources["statefulsets/status"]["verbs"] == ["get", "patch", "update"]
    assert "controllerrevisions/status" not in resources
    _, core = await api.get("/api/v1")
    core_resources = _resources(core)
    # Namespaces have no deletecollection; componentstatuses are get/list only; namespaces/finalize is update.
    assert core_resources["namespaces"]["verbs"] == ["create", "delete", "get", "list", "patch", "update", "watch"]
    assert core_resources["componentstatuses"]["verbs"] == ["get", "list"]
    assert core_resources["namespaces/finalize"]["verbs"] == ["update"]
    assert core_resources["pods"]["shortNames"] == ["po"]
    assert core_resources["pods/log"] == {
        "name": "pods/log",
        "singularName": "",
        "namespaced": True,
        "kind": "Pod",
        "verbs": ["get"],
    }
    assert (
        core_resources["pods/eviction"]["group"] == "policy" and core_resources["pods/eviction"]["kind"] == "Eviction"
    )
    assert core_resources["pods/exec"] == {
        "name": "pods/exec",
        "singularName": "",
        "namespaced": True,
        "kind": "PodExecOptions",
        "verbs": ["create", "get"],
    }
    assert core_resources["pods/proxy"]["kind"] == "PodProxyOptions"  # served: pyop.testing.builtins.resource_proxy
    _, authz = await api.get("/apis/authorization.k8s.io/v1")
    assert {entry["name"]: entry["verbs"] for entry in authz["resources"]} == {
        "localsubjectaccessreviews": ["create"],
        "selfsubjectaccessreviews": ["create"],
        "selfsubjectrulesreviews": ["create"],
        "subjectaccessreviews": ["create"],
    }


async def test_the_all_category_is_kubectl_get_all(api: Api) -> None:
    in_all = set()
    for path in ("/api/v1", "/apis/apps/v1", "/apis/batch/v1", "/apis/autoscaling/v2"):
        _, document = await api.get(path)
        in_all |= {entry["name"] for entry in document["resources"] if "all" in entry.get("categories", [])}
    assert in_all == {
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


async def test_verbs_a_resource_lacks_are_405(api: Api) -> None:
    status, body = await api.delete("/api/v1/namespaces")
    assert status == 405 and body["reason"] == "MethodNotAllowed"
    status, _ = await api.post("/api/v1/componentstatuses", {"metadata": {"name": "x"}})
    assert status == 405
    status, _ = await api.get("/apis/authentication.k8s.io/v1/selfsubjectreviews")
    assert status == 405


async def test_newly_served_kinds_round_trip(api: Api) -> None:
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web"},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
    }
    created = await api.create_ok("/apis/networking.k8s.io/v1/namespaces/default/ingresses", ingress)
    assert created["metadata"]["generation"] == 1  # Ingress strategies track generation
    status, got = await api.get("/apis/networking.k8s.io/v1/namespaces/default/ingresses/web/status")
    assert status == 200 and got["metadata"]["name"] == "web"
    pdb = {"metadata": {"name": "web"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
    await api.create_ok("/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb)
    role = {"metadata": {"name": "reader"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    await api.create_ok("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", role)
    status, roles = await api.get("/apis/rbac.authorization.k8s.io/v1/roles")
    assert status == 200 and [item["metadata"]["name"] for item in roles["items"]] == [
        "reader",
        "extension-apiserver-authentication-reader",  # kube-system's bootstrap Role (pyop.testing.aggregator)
    ]
    status, _ = await api.get("/apis/rbac.authorization.k8s.io/v1/namespaces/default/clusterroles")
    assert status == 404  # cluster-scoped
    await api.create_ok("/api/v1/nodes", {"metadata": {"name": "node-1"}})
    status, _ = await api.get("/api/v1/namespaces/default/pods/p/log")
    assert status == 404


async def test_field_selectors_per_kind_are_kept(api: Api) -> None:
    for name, node in (("a", "node-1"), ("b", "node-2")):
        pod = {"metadata": {"name": name}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}}
        await api.create_ok("/api/v1/namespaces/default/pods", pod)
    status, pods = await api.get("/api/v1/namespaces/default/pods", fieldSelector="spec.nodeName=node-2")
    assert status == 200 and [pod["metadata"]["name"] for pod in pods["items"]] == ["b"]
    status, body = await api.get("/api/v1/namespaces/default/configmaps", fieldSelector="data.x=1")
    assert status == 400, body
    status, namespaces = await api.get("/api/v1/namespaces", fieldSelector="status.phase=Active")
    assert status == 200 and len(namespaces["items"]) == 4


@pytest.mark.parametrize("version", ["1.32", "1.37"])
async def test_a_server_serves_its_versions_groups(version: str) -> None:
    """resource.k8s.io/v1 (dynamic resource allocation) went GA in 1.34: a 1.32 server does not have it."""
    server = TestAPIServer(kubernetes_version=version)
    assert server.resources.has_group_version("resource.k8s.io", "v1") == (version == "1.37")
    assert server.resources.has_group_version("networking.k8s.io", "v1")
    for resource_type in builtin_types(version):
        assert server.resources.find(resource_type.group, resource_type.version, resource_type.plural) is not None


async def test_post_to_an_object_path_is_405(api: Api) -> None:
    await api.create_ok("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}})
    for path in (
        "/api/v1/namespaces/default/configmaps/c",
        "/api/v1/namespaces/default/configmaps/other",
        "/api/v1/namespaces/default/services/c/status",
    ):
        status, body = await api.post(path, {"metadata": {"name": "other"}})
        assert (status, body["reason"]) == (405, "MethodNotAllowed"), path
    status, _ = await api.get("/api/v1/namespaces/default/configmaps/other")
    assert status == 404
