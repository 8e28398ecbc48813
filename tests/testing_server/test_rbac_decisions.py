"""Remembered RBAC decisions (pyop.testing.authorization.decisions) give RBAC's answer for the objects stored now:
Hypothesis writes, replaces and deletes Roles, ClusterRoles (aggregated ones too) and their bindings between
questions and compares the server's decision with a fresh RBAC walk after every step; over HTTP, a change of
a binding or a role takes effect on the very next request."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.authorization.attributes import Attributes
from pyop.apiserver.registry.operations import WriteOptions
from pyop.testing import TestAPIServer
from pyop.testing.authorization.rbac import RBAC
from testing_server.helpers import Api, connector

GROUP = "rbac.authorization.k8s.io"
USERS = (
    UserInfo("system:serviceaccount:team:robot", ["system:serviceaccounts", "system:authenticated"]),
    UserInfo("alice", ["devs", "system:authenticated"]),
    UserInfo("bob", ["system:authenticated"]),
    UserInfo("alice", ["system:authenticated"]),  # the same name without the group: a question of its own
)
SUBJECTS = (
    {"kind": "ServiceAccount", "name": "robot", "namespace": "team"},
    {"kind": "User", "name": "alice"},
    {"kind": "Group", "name": "devs"},
)
RULES: tuple[list[dict[str, list[str]]], ...] = (
    [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
    [{"apiGroups": ["apps"], "resources": ["deployments", "deployments/status"], "verbs": ["*"]}],
    [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["watch"]}],
    [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": ["web"]}],
    [],
)
QUESTIONS = [
    Attributes(user, verb, True, group, "v1", resource, subresource, namespace, name)
    for user in USERS
    for verb, group, resource, subresource, name in (
        ("get", "", "pods", "", "web"),
        ("list", "", "pods", "", ""),
        ("patch", "apps", "deployments", "status", "web"),
        ("watch", "apps", "deployments", "", ""),
    )
    for namespace in ("team", "")
]


@pytest.fixture(scope="module")
def server() -> TestAPIServer:
    """Not listening: the decisions are asked of its Authorization directly."""
    server = TestAPIServer(tls=False)
    operations = server.operations
    operations.create(server.resources.lookup("", "v1", "namespaces"), "", {"metadata": {"name": "team"}}, _options())
    return server


def _options() -> WriteOptions:
    return WriteOptions(field_manager="test")


def _put(server: TestAPIServer, plural: str, namespace: str, obj: dict[str, Any]) -> None:
    """Create, or replace what is stored under the name."""
    resource_type = server.resources.lookup(GROUP, "v1", plural)
    name = obj["metadata"]["name"]
    current = server.store.get(resource_type.storage_key, namespace, name)
    if current is None:
        server.operations.create(resource_type, namespace, obj, _options())
    else:
        obj["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        server.operations.update(resource_type, namespace, name, obj, _options())


def _delete(server: TestAPIServer, plural: str, namespace: str, name: str) -> None:
    resource_type = server.resources.lookup(GROUP, "v1", plural)
    if server.store.get(resource_type.storage_key, namespace, name) is not None:
        server.operations.delete(resource_type, namespace, name, {}, _options())


NAMES = st.sampled_from(["r1", "r2", "r3"])
STEPS = st.one_of(
    st.tuples(st.just("role"), st.sampled_from(["roles", "clusterroles"]), NAMES, st.sampled_from(range(len(RULES)))),
    st.tuples(st.just("labelled"), NAMES, st.sampled_from(range(len(RULES))), st.booleans()),
    st.tuples(st.just("aggregate"), NAMES),
    st.tuples(
        st.just("binding"),
        st.sampled_from(["rolebindings", "clusterrolebindings"]),
        NAMES,
        st.sampled_from(["Role", "ClusterRole"]),
        NAMES,
        st.sampled_from(range(len(SUBJECTS))),
    ),
    st.tuples(
        st.just("delete"), st.sampled_from(["roles", "clusterroles", "rolebindings", "clusterrolebindings"]), NAMES
    ),
)


def _step(server: TestAPIServer, step: tuple[Any, ...]) -> None:
    kind = step[0]
    if kind == "role":
        _, plural, name, rules = step
        namespace = "team" if plural == "roles" else ""
        _put(server, plural, namespace, {"metadata": {"name": name}, "rules": RULES[rules]})
    elif kind == "labelled":  # a ClusterRole an aggregated one may pick up by its label
        _, name, rules, labelled = step
        labels = {"aggregate-to-test": "true"} if labelled else {}
        metadata = {"name": f"part-{name}", "labels": labels}
        _put(server, "clusterroles", "", {"metadata": metadata, "rules": RULES[rules]})
    elif kind == "aggregate":
        selector = {"matchLabels": {"aggregate-to-test": "true"}}
        role = {"metadata": {"name": step[1]}, "aggregationRule": {"clusterRoleSelectors": [selector]}, "rules": []}
        _put(server, "clusterroles", "", role)
    elif kind == "binding":
        _, plural, name, role_kind, role, subject = step
        namespace = "team" if plural == "rolebindings" else ""
        if plural == "clusterrolebindings" and role_kind == "Role":
            role_kind = "ClusterRole"  # a ClusterRoleBinding can only refer to a ClusterRole
        binding = {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": GROUP, "kind": role_kind, "name": role},
            "subjects": [SUBJECTS[subject]],
        }
        _put(server, plural, namespace, binding)
    else:
        _, plural, name = step
        _delete(server, plural, "team" if plural in ("roles", "rolebindings") else "", name)


def _assert_as_rbac_decides(server: TestAPIServer) -> None:
    fresh = RBAC(server.store)  # reads the objects stored now, remembers nothing
    for attributes in QUESTIONS:
        assert server.authorization.decide(attributes) == fresh.authorize(attributes), attributes


@settings(max_examples=120, deadline=None)
@given(steps=st.lists(STEPS, min_size=1, max_size=8))
def test_remembered_decisions_follow_every_rbac_change(server: TestAPIServer, steps: list[tuple[Any, ...]]) -> None:
    _assert_as_rbac_decides(server)  # remembered from here on
    for step in steps:
        _step(server, step)
        _assert_as_rbac_decides(server)


def test_a_decision_is_remembered_until_an_rbac_object_changes(server: TestAPIServer) -> None:
    """The second question is answered from the table (RBAC is not asked), a write elsewhere keeps it, an RBAC
    write forgets it."""
    authorization = server.authorization
    asked: list[Attributes] = []
    walk = authorization.rbac_decision.decide
    authorization.rbac_decision.decide = lambda attributes: asked.append(attributes) or walk(attributes)  # type: ignore[func-returns-value]
    try:
        _step(server, ("role", "roles", "r8", 1))  # whatever earlier tests left remembered is forgotten
        question = QUESTIONS[0]
        authorization.decide(question)
        authorization.decide(question)
        assert asked == [question]
        configmaps = server.resources.lookup("", "v1", "configmaps")
        server.operations.create(configmaps, "team", {"metadata": {"generateName": "c-"}}, _options())
        authorization.decide(question)
        assert asked == [question]
        _step(server, ("role", "roles", "r9", 0))
        authorization.decide(question)
        assert asked == [question, question]
    finally:
        authorization.rbac_decision.decide = walk


@pytest.fixture
async def listening() -> Any:
    async with TestAPIServer(tls=False) as server:
        yield server


async def test_over_http_an_rbac_change_counts_on_the_very_next_request(listening: TestAPIServer) -> None:
    server = listening
    admin_headers = {"Authorization": f"Bearer {server.token}"}
    async with aiohttp.ClientSession(base_url=server.url, headers=admin_headers, connector=connector(server)) as s:
        admin = Api(s)
        await admin.create_ok("/api/v1/namespaces", {"metadata": {"name": "team"}})
        await admin.create_ok("/api/v1/namespaces/team/serviceaccounts", {"metadata": {"name": "robot"}})
        token = server.token_for_service_account("team", "robot")
        robot_headers = {"Authorization": f"Bearer {token}"}
        async with aiohttp.ClientSession(base_url=server.url, headers=robot_headers, connector=connector(server)) as r:
            robot = Api(r)
            pods = "/api/v1/namespaces/team/pods"
            assert (await robot.get(pods))[0] == 403
            assert (await robot.get(pods))[0] == 403  # remembered
            role = {"metadata": {"name": "reader"}, "rules": RULES[0]}
            await admin.create_ok(f"/apis/{GROUP}/v1/namespaces/team/roles", role)
            assert (await robot.get(pods))[0] == 403  # a role alone binds nobody
            binding = {
                "metadata": {"name": "reader"},
                "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "reader"},
                "subjects": [SUBJECTS[0]],
            }
            await admin.create_ok(f"/apis/{GROUP}/v1/namespaces/team/rolebindings", binding)
            assert (await robot.get(pods))[0] == 200
            status, _ = await admin.call(
                "PATCH",
                f"/apis/{GROUP}/v1/namespaces/team/roles/reader",
                {"rules": RULES[3]},
                content_type="application/merge-patch+json",
            )
            assert status == 200
            assert (await robot.get(pods))[0] == 403  # get of `web` only now
            assert (await robot.get(pods + "/web"))[0] == 404  # allowed: there is no such pod
            assert (await admin.delete(f"/apis/{GROUP}/v1/namespaces/team/rolebindings/reader"))[0] == 200
            assert (await robot.get(pods + "/web"))[0] == 403
