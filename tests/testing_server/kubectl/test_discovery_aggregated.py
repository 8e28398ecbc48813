"""Aggregated discovery (apidiscovery.k8s.io/v2) for /api and /apis, and kubectl using it."""

from __future__ import annotations

from typing import Any

from pyop.testing import TestAPIServer
from testing_server.helpers import Api
from testing_server.kubectl.helpers import WIDGET_CRD, Kubectl

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
CLIENT_GO_ACCEPT = (
    f"{AGGREGATED},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)


async def _get(api: Api, path: str, accept: str) -> tuple[str, Any]:
    async with api.session.get(path, headers={"Accept": accept}) as response:
        assert response.status == 200
        return response.headers["Content-Type"], await response.json(content_type=None)


def _resource(document: dict[str, Any], group: str, version: str, name: str) -> dict[str, Any]:
    item = next(item for item in document["items"] if item["metadata"]["name"] == group)
    served = next(v for v in item["versions"] if v["version"] == version)
    return next(r for r in served["resources"] if r["resource"] == name)


async def test_core_group_in_one_document(api: Api) -> None:
    content_type, document = await _get(api, "/api", CLIENT_GO_ACCEPT)
    assert content_type == AGGREGATED  # client-go tells the forms apart by the Content-Type
    assert document["kind"] == "APIGroupDiscoveryList" and document["apiVersion"] == "apidiscovery.k8s.io/v2"
    assert [item["metadata"]["name"] for item in document["items"]] == [""]
    pods = _resource(document, "", "v1", "pods")
    assert pods["scope"] == "Namespaced" and pods["singularResource"] == "pod"
    assert pods["responseKind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert "po" in pods["shortNames"] and "all" in pods["categories"]
    assert {"subresource": "status", "responseKind": {"group": "", "version": "v1", "kind": "Pod"}}.items() <= next(
        s for s in pods["subresources"] if s["subresource"] == "status"
    ).items()
    assert _resource(document, "", "v1", "namespaces")["scope"] == "Cluster"


async def test_named_groups_agree_with_the_unaggregated_documents(api: Api, server: TestAPIServer) -> None:
    server.add_crd(WIDGET_CRD)
    _, document = await _get(api, "/apis", CLIENT_GO_ACCEPT)
    status, groups = await api.get("/apis")
    assert [item["metadata"]["name"] for item in document["items"]] == [g["name"] for g in groups["groups"]]
    for group in groups["groups"]:
        item = next(i for i in document["items"] if i["metadata"]["name"] == group["name"])
        assert [v["version"] for v in item["versions"]] == [v["version"] for v in group["versions"]]
        for version in item["versions"]:
            status, listed = await api.get(f"/apis/{group['name']}/{version['version']}")
            assert {r["resource"] for r in version["resources"]} == {
                r["name"] for r in listed["resources"] if "/" not in r["name"]
            }
            assert version["freshness"] == "Current"
    scale = next(
        s for s in _resource(document, "apps", "v1", "deployments")["subresources"] if s["subresource"] == "scale"
    )
    assert scale["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    widgets = _resource(document, "example.pyop.dev", "v1", "widgets")
    assert widgets["responseKind"]["kind"] == "Widget"


async def test_plain_accept_keeps_the_unaggregated_documents(api: Api) -> None:
    content_type, document = await _get(api, "/apis", "application/json")
    assert content_type.startswith("application/json") and "g=apidiscovery" not in content_type
    assert document["kind"] == "APIGroupList"
    _, legacy = await _get(api, "/api", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList")
    assert legacy["kind"] == "APIVersions"  # v2beta1 is no longer served (kube-apiserver 1.33+)


async def test_kubectl_discovers_in_two_requests(kubectl: Kubectl, server: TestAPIServer) -> None:
    version = (await kubectl("version", "--client")).stdout
    assert "Client Version: v1." in version
    server.reset_requests()
    await kubectl("get", "deployments")
    discovery = [record.path for record in server.requests if record.path.startswith(("/api", "/apis"))]
    assert discovery[:2] == ["/api", "/apis"]
    assert not [
        path for path in discovery if path.count("/") == 3 and path.startswith("/apis/") and "namespaces" not in path
    ]
    assert discovery[2:] == ["/apis/apps/v1/namespaces/default/deployments"]
