"""Delegated authorization: SubjectAccessReviews allowed and denied (kube's 403), their caches counted in the
cluster's request records, always-allowed paths and groups that ask nobody."""

from __future__ import annotations

from pathlib import Path

from apiserver.helpers import FLUNDERS, CertificateAuthority, call
from apiserver.test_authentication import grant
from pyop.apiserver import AggregatedServer, APIGroupVersion, RecommendedOptions
from pyop.apiserver.authentication.delegating import DelegatedUser
from pyop.apiserver.authorization.attributes import Attributes
from pyop.apiserver.authorization.delegating import DelegatingAuthorizer, subject_access_review_spec
from pyop.testing import TestAPIServer


async def test_denied_is_kubes_forbidden_and_cached(server: AggregatedServer, core: TestAPIServer) -> None:
    core.add_user("bob-token", "bob")
    core.reset_requests()
    for _ in range(3):
        status, body = await call(server, "GET", FLUNDERS + "/x", token="bob-token")
        assert status == 403
        assert body["reason"] == "Forbidden"
        assert body["message"] == (
            'flunders.wardle.example.com "x" is forbidden: User "bob" cannot get resource "flunders" in API group '
            '"wardle.example.com" in the namespace "default"'
        )
        assert body["details"] == {"name": "x", "group": "wardle.example.com", "kind": "flunders"}
    assert core.count_requests(resource="subjectaccessreviews") == 1


async def test_allowed_after_the_denied_cache_expires(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions
) -> None:
    options.authorization.deny_cache_ttl = 0
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        core.add_user("bob-token", "bob")
        status, _ = await call(server, "GET", FLUNDERS, token="bob-token")
        assert status == 403
        await grant(core, "User", "bob", ["list"])
        status, body = await call(server, "GET", FLUNDERS, token="bob-token")
        assert status == 200, body
        core.reset_requests()
        await call(server, "GET", FLUNDERS, token="bob-token")
        assert core.count_requests(resource="subjectaccessreviews") == 0  # allowed: cached


async def test_each_verb_and_object_is_its_own_question(server: AggregatedServer, core: TestAPIServer) -> None:
    core.add_user("bob-token", "bob")
    await grant(core, "User", "bob", ["list", "create"])
    status, _ = await call(server, "POST", FLUNDERS, token="bob-token", body={"metadata": {"name": "f"}})
    assert status == 201
    status, _ = await call(server, "DELETE", FLUNDERS + "/f", token="bob-token")
    assert status == 403
    status, _ = await call(server, "GET", "/apis/wardle.example.com/v1alpha1/fischers", token="bob-token")
    assert status == 403


async def test_always_allowed_paths_and_groups_ask_nobody(server: AggregatedServer, core: TestAPIServer) -> None:
    core.reset_requests()
    for path in ("/healthz", "/livez", "/readyz"):
        status, text = await call(server, "GET", path)
        assert (status, text) == (200, "ok")
    status, _ = await call(server, "GET", FLUNDERS, token=core.token)  # the admin: system:masters
    assert status == 200
    assert core.count_requests(resource="subjectaccessreviews") == 0
    status, _ = await call(server, "GET", "/metrics")  # not always allowed: anonymous is asked about, and denied
    assert status == 403
    assert core.count_requests(resource="subjectaccessreviews") == 1


async def test_always_allow_paths_with_a_prefix() -> None:
    asked: list[dict] = []

    class Reviewer:
        async def review_access(self, spec: dict) -> dict:
            asked.append(spec)
            return {"allowed": False}

    authorizer = DelegatingAuthorizer(Reviewer(), always_allow_paths=["/healthz", "/debug/*"])
    user = DelegatedUser("u", ["g"])
    for path, allowed in (("/healthz", True), ("/healthz/ping", False), ("/debug/pprof", True), ("/debugx", False)):
        decision = await authorizer.decide(Attributes(user=user, verb="get", resource_request=False, path=path))
        assert decision.allowed is allowed, path
    assert [spec["nonResourceAttributes"]["path"] for spec in asked] == ["/healthz/ping", "/debugx"]


def test_review_spec_carries_the_whole_identity() -> None:
    user = DelegatedUser("alice", ["team-a"], "uid-1", extra={"scopes": ["read"]})
    attributes = Attributes(
        user=user,
        verb="update",
        resource_request=True,
        api_group="wardle.example.com",
        api_version="v1alpha1",
        resource="flunders",
        subresource="status",
        namespace="default",
        name="f",
    )
    assert subject_access_review_spec(attributes) == {
        "user": "alice",
        "groups": ["team-a"],
        "uid": "uid-1",
        "extra": {"scopes": ["read"]},
        "resourceAttributes": {
            "verb": "update",
            "group": "wardle.example.com",
            "version": "v1alpha1",
            "resource": "flunders",
            "namespace": "default",
            "subresource": "status",
            "name": "f",
        },
    }


async def test_an_unreachable_cluster_is_401_for_tokens_and_500_for_reviews(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions, tmp_path: Path
) -> None:
    clients = CertificateAuthority.create(tmp_path / "clients", "clients")
    options.authentication.client_ca_file = str(clients.ca_file)
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        await core.stop_listening()
        status, body = await call(server, "GET", FLUNDERS, token="any-token")
        assert (status, body["reason"]) == (401, "Unauthorized")
        status, body = await call(server, "GET", FLUNDERS, certificate=clients.client("dave"))
        assert (status, body["reason"]) == (500, "InternalError")
        await core.start_listening()
        status, body = await call(server, "GET", FLUNDERS, certificate=clients.client("dave"))
        assert status == 403  # answered now: failures were not cached
