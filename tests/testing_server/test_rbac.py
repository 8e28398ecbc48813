"""RBAC authorization of every request, and the review APIs, against kube-apiserver's documented answers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from pyop.testing import TestAPIServer
from pyop.testing.kubeconfig import kubeconfig_dict, write_kubeconfig
from testing_server.helpers import Api, connector

RBAC = "/apis/rbac.authorization.k8s.io/v1"
SA_USER = "system:serviceaccount:team:robot"


@asynccontextmanager
async def as_token(server: TestAPIServer, token: str) -> AsyncIterator[Api]:
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session:
        yield Api(session)


@pytest.fixture
async def robot(server: TestAPIServer, api: Api) -> str:
    """A ServiceAccount team/robot and its token; no role bound yet."""
    await api.create_ok("/api/v1/namespaces", {"metadata": {"name": "team"}})
    await api.create_ok("/api/v1/namespaces/team/serviceaccounts", {"metadata": {"name": "robot"}})
    return server.token_for_service_account("team", "robot")


def _role(name: str, rules: list[dict[str, Any]], kind: str = "Role") -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": name}, "rules": rules}


def _binding(name: str, role_kind: str, role: str, subjects: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects,
    }


ROBOT_SUBJECT = {"kind": "ServiceAccount", "name": "robot", "namespace": "team"}


async def test_a_service_account_without_roles_gets_kube_apiservers_403(server: TestAPIServer, robot: str) -> None:
    async with as_token(server, robot) as client:
        status, body = await client.get("/api/v1/namespaces/team/pods")
        assert status == 403
        assert body == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f'pods is forbidden: User "{SA_USER}" cannot list resource "pods" in API group "" '
            'in the namespace "team"',
            "reason": "Forbidden",
            "details": {"kind": "pods"},
            "code": 403,
        }
        status, body = await client.get("/apis/apps/v1/namespaces/team/deployments/web")
        assert status == 403
        assert body["message"] == (
            f'deployments.apps "web" is forbidden: User "{SA_USER}" cannot get resource "deployments" in API group '
            '"apps" in the namespace "team"'
        )
        assert body["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
        status, body = await client.get("/api/v1/nodes")
        assert body["message"].endswith('cannot list resource "nodes" in API group "" at the cluster scope')
        status, body = await client.call("PUT", "/apis/apps/v1/namespaces/team/deployments/web/status", {})
        assert status == 403 and 'cannot update resource "deployments/status"' in body["message"]


async def test_discovery_and_version_are_open_to_every_authenticated_user(server: TestAPIServer, robot: str) -> None:
    async with as_token(server, robot) as client:
        for path in ("/api", "/api/v1", "/apis", "/apis/apps/v1", "/version"):
            status, _ = await client.get(path)
            assert status == 200, path
        status, body = await client.call("POST", "/apis", {})
        assert status == 403
        assert body["message"] == f'forbidden: User "{SA_USER}" cannot post path "/apis"'
        assert "details" not in body


async def test_a_role_binding_grants_in_its_namespace_only(server: TestAPIServer, api: Api, robot: str) -> None:
    await api.create_ok(
        f"{RBAC}/namespaces/team/roles",
        _role("pod-reader", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]),
    )
    await api.create_ok(
        f"{RBAC}/namespaces/team/rolebindings", _binding("read-pods", "Role", "pod-reader", [ROBOT_SUBJECT])
    )
    async with as_token(server, robot) as client:
        status, _ = await client.get("/api/v1/namespaces/team/pods")
        assert status == 200
        status, _ = await client.get("/api/v1/namespaces/default/pods")
        assert status == 403
        status, _ = await client.get("/api/v1/pods")  # all namespaces: cluster scope
        assert status == 403
        status, _ = await client.post("/api/v1/namespaces/team/pods", {"metadata": {"name": "p"}})
        assert status == 403


async def test_resource_names_subresources_and_wildcards(server: TestAPIServer, api: Api, robot: str) -> None:
    rules = [
        {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"], "verbs": ["get", "list"]},
        {"apiGroups": ["apps"], "resources": ["*/status"], "verbs": ["get"]},
        {"apiGroups": ["batch"], "resources": ["*"], "verbs": ["*"]},
    ]
    await api.create_ok(f"{RBAC}/clusterroles", _role("mixed", rules, "ClusterRole"))
    await api.create_ok(f"{RBAC}/clusterrolebindings", _binding("mixed", "ClusterRole", "mixed", [ROBOT_SUBJECT]))
    await api.create_ok("/api/v1/namespaces/team/configmaps", {"metadata": {"name": "settings"}})
    await api.create_ok("/api/v1/namespaces/team/configmaps", {"metadata": {"name": "other"}})
    async with as_token(server, robot) as client:
        assert (await client.get("/api/v1/namespaces/team/configmaps/settings"))[0] == 200
        assert (await client.get("/api/v1/namespaces/team/configmaps/other"))[0] == 403
        assert (await client.get("/api/v1/namespaces/team/configmaps"))[0] == 403  # a list names no object
        status, _ = await client.get("/api/v1/namespaces/team/configmaps", fieldSelector="metadata.name=settings")
        assert status == 200  # ... unless narrowed to the one name (RequestInfoFactory)
        assert (await client.get("/apis/apps/v1/namespaces/team/deployments/x/status"))[0] == 404  # allowed, absent
        assert (await client.get("/apis/apps/v1/namespaces/team/deployments/x"))[0] == 403
        assert (await client.get("/apis/batch/v1/jobs"))[0] == 200


async def test_a_missing_role_is_the_deny_reason(server: TestAPIServer, api: Api, robot: str) -> None:
    await api.create_ok(f"{RBAC}/clusterrolebindings", _binding("dangling", "ClusterRole", "nope", [ROBOT_SUBJECT]))
    async with as_token(server, robot) as client:
        status, body = await client.get("/api/v1/namespaces/team/pods")
    assert status == 403
    assert body["message"].endswith(
        'in the namespace "team": RBAC: clusterrole.rbac.authorization.k8s.io "nope" not found'
    )


async def test_aggregated_cluster_roles_gain_labelled_rules(server: TestAPIServer, api: Api, robot: str) -> None:
    """A CRD's ClusterRole labelled aggregate-to-view extends view (and so edit and admin)."""
    widget_viewer = _role(
        "widget-viewer",
        [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list"]}],
        "ClusterRole",
    )
    widget_viewer["metadata"]["labels"] = {"rbac.authorization.k8s.io/aggregate-to-view": "true"}
    await api.create_ok(f"{RBAC}/clusterroles", widget_viewer)
    await api.create_ok(
        f"{RBAC}/namespaces/team/rolebindings", _binding("edit", "ClusterRole", "edit", [ROBOT_SUBJECT])
    )
    async with as_token(server, robot) as client:
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {
                "resourceAttributes": {
                    "namespace": "team",
                    "verb": "list",
                    "group": "example.com",
                    "resource": "widgets",
                }
            },
        }
        status, answered = await client.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review)
        assert status == 201
        assert answered["status"] == {
            "allowed": True,
            "reason": 'RBAC: allowed by RoleBinding "edit/team" of ClusterRole "edit" to ServiceAccount "robot/team"',
        }
        assert (await client.post("/api/v1/namespaces/team/configmaps", {"metadata": {"name": "c"}}))[0] == 201
        assert (await client.get(f"{RBAC}/namespaces/team/roles"))[0] == 403  # roles are admin's, not edit's


async def test_default_cluster_roles_are_served(api: Api) -> None:
    status, roles = await api.get(f"{RBAC}/clusterroles")
    assert status == 200
    names = {role["metadata"]["name"] for role in roles["items"]}
    assert {"cluster-admin", "system:discovery", "system:basic-user", "system:public-info-viewer"} <= names
    assert {"admin", "edit", "view"} <= names
    status, binding = await api.get(f"{RBAC}/clusterrolebindings/cluster-admin")
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}]


async def test_subject_access_review_answers_from_the_same_rules(api: Api, robot: str) -> None:
    path = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
    spec: dict[str, Any] = {
        "user": SA_USER,
        "groups": ["system:serviceaccounts", "system:authenticated"],
        "resourceAttributes": {"namespace": "team", "verb": "get", "resource": "pods"},
    }
    _, denied = await api.post(path, {"kind": "SubjectAccessReview", "spec": spec})
    assert denied["status"] == {"allowed": False}
    _, masters = await api.post(path, {"spec": {**spec, "groups": ["system:masters"]}})
    assert masters["status"] == {"allowed": True}
    non_resource = {
        "user": SA_USER,
        "groups": ["system:authenticated"],
        "nonResourceAttributes": {"path": "/version", "verb": "get"},
    }
    _, version = await api.post(path, {"spec": non_resource})
    assert version["status"]["allowed"] is True
    assert version["status"]["reason"].startswith('RBAC: allowed by ClusterRoleBinding "system:discovery"')
    status, body = await api.post(path, {"spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}})
    assert status == 422 and body["reason"] == "Invalid"
    assert [cause["field"] for cause in body["details"]["causes"]] == ["spec.user"]
    status, body = await api.post(path, {"spec": {"user": "u"}})
    assert status == 422 and body["details"]["causes"][0]["field"] == "spec.resourceAttributes"


async def test_self_subject_review_and_rules_review(server: TestAPIServer, api: Api, robot: str) -> None:
    await api.create_ok(
        f"{RBAC}/namespaces/team/roles",
        _role("pod-reader", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]),
    )
    await api.create_ok(
        f"{RBAC}/namespaces/team/rolebindings", _binding("read-pods", "Role", "pod-reader", [ROBOT_SUBJECT])
    )
    async with as_token(server, robot) as client:
        status, me = await client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", {})
        assert status == 201
        user = me["status"]["userInfo"]
        assert user["username"] == SA_USER
        assert user["groups"] == ["system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"]
        assert user["uid"]
        status, rules = await client.post(
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {"spec": {"namespace": "team"}}
        )
        assert status == 201
        assert {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]} in rules["status"]["resourceRules"]
        assert rules["status"]["incomplete"] is False
        assert any("/version" in rule["nonResourceURLs"] for rule in rules["status"]["nonResourceRules"])


async def test_the_admin_token_and_other_users(server: TestAPIServer, api: Api) -> None:
    """The default token stays system:masters; a user added with add_user is authorized by RBAC."""
    assert (await api.get("/api/v1/nodes"))[0] == 200
    server.add_user("alice-token", "alice", ["devs"])
    await api.create_ok(
        f"{RBAC}/clusterrolebindings",
        _binding("devs-view", "ClusterRole", "view", [{"kind": "Group", "name": "devs"}]),
    )
    async with as_token(server, "alice-token") as client:
        assert (await client.get("/apis/apps/v1/deployments"))[0] == 200
        status, body = await client.delete("/api/v1/namespaces/default/configmaps/x")
        assert status == 403 and 'User "alice" cannot delete resource "configmaps"' in body["message"]


def test_a_token_needs_the_service_account() -> None:
    server = TestAPIServer()
    with pytest.raises(LookupError, match='serviceaccount "ghost" not found in namespace "default"'):
        server.token_for_service_account("default", "ghost")


async def test_the_official_client_sees_the_403_and_reviews(server: TestAPIServer, robot: str, tmp_path: Path) -> None:
    """kubernetes (the official client) as the ServiceAccount: ApiException 403 with kube-apiserver's Status, and a
    SelfSubjectAccessReview answered from the same rules (it sends JSON, unlike kubectl's protobuf)."""
    kubernetes = pytest.importorskip("kubernetes")
    ca_data = server.certificate.ca_data if server.certificate else None
    kubeconfig = write_kubeconfig(tmp_path / "robot", kubeconfig_dict(server.url, robot, "team", ca_data))

    def use() -> tuple[int, dict[str, Any], bool]:
        api_client = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))
        try:
            try:
                kubernetes.client.CoreV1Api(api_client).list_namespaced_pod("team")
            except kubernetes.client.ApiException as error:
                status, body = error.status, json.loads(error.body)
            review = kubernetes.client.V1SelfSubjectAccessReview(
                spec=kubernetes.client.V1SelfSubjectAccessReviewSpec(
                    non_resource_attributes=kubernetes.client.V1NonResourceAttributes(path="/version", verb="get")
                )
            )
            answer = kubernetes.client.AuthorizationV1Api(api_client).create_self_subject_access_review(review)
            return status, body, answer.status.allowed
        finally:
            api_client.close()

    status, body, allowed = await asyncio.to_thread(use)
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"].startswith(f'pods is forbidden: User "{SA_USER}" cannot list resource "pods"')
    assert allowed is True


async def test_the_aggregation_controller_writes_aggregated_rules(api: Api) -> None:
    widget_editor = _role(
        "widget-editor", [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["*"]}], "ClusterRole"
    )
    widget_editor["metadata"]["labels"] = {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}
    await api.create_ok(f"{RBAC}/clusterroles", widget_editor)
    rule = widget_editor["rules"][0]
    async with asyncio.timeout(10):  # a guard against a hang only
        while True:
            _, edit = await api.get(f"{RBAC}/clusterroles/edit")
            _, admin = await api.get(f"{RBAC}/clusterroles/admin")
            if rule in edit["rules"] and rule in admin["rules"]:
                break
            await asyncio.sleep(0.02)
    _, view = await api.get(f"{RBAC}/clusterroles/view")
    assert rule not in view["rules"]
    assert "clusterrole-aggregation-controller" in {entry["manager"] for entry in edit["metadata"]["managedFields"]}


async def test_a_deleted_service_accounts_token_stops_authenticating(
    server: TestAPIServer, api: Api, robot: str
) -> None:
    async with as_token(server, robot) as client:
        assert (await client.get("/api"))[0] == 200
        await api.delete("/api/v1/namespaces/team/serviceaccounts/robot")
        async with asyncio.timeout(10):  # a guard against a hang only
            while (await client.get("/api"))[0] != 401:
                await asyncio.sleep(0.02)


async def test_the_token_subresource_issues_service_account_tokens(server: TestAPIServer, api: Api, robot: str) -> None:
    path = "/api/v1/namespaces/team/serviceaccounts/robot/token"
    status, issued = await api.post(path, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"})
    assert status == 201, issued
    assert issued["kind"] == "TokenRequest" and issued["spec"]["expirationSeconds"] == 3600
    assert issued["spec"]["audiences"] == ["https://kubernetes.default.svc.cluster.local"]
    async with as_token(server, issued["status"]["token"]) as client:
        _, me = await client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", {})
        assert me["status"]["userInfo"]["username"] == SA_USER
        status, body = await client.post("/api/v1/namespaces/team/serviceaccounts/robot/token", {})
        assert status == 403
        assert f'User "{SA_USER}" cannot create resource "serviceaccounts/token" in API group ""' in body["message"]
    status, body = await api.post(path, {"spec": {"expirationSeconds": 60}})
    assert status == 422 and body["details"]["causes"][0]["field"] == "spec.expirationSeconds"
    status, body = await api.post("/api/v1/namespaces/team/serviceaccounts/ghost/token", {})
    assert status == 404 and body["message"] == 'serviceaccounts "ghost" not found'
    status, _ = await api.post("/api/v1/namespaces/team/configmaps/x/token", {})
    assert status == 404
    _, core = await api.get("/api/v1")
    entry = next(item for item in core["resources"] if item["name"] == "serviceaccounts/token")
    assert (entry["group"], entry["kind"], entry["verbs"]) == ("authentication.k8s.io", "TokenRequest", ["create"])
