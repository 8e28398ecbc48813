"""Delegated authentication: request-header client certificates (allowed and unallowed names), client certificates,
bearer tokens reviewed by the cluster with a cache (counted in the cluster's request records), anonymous."""

from __future__ import annotations

from pathlib import Path

from apiserver.helpers import FLUNDERS, CertificateAuthority, call
from pyop.apiserver import AggregatedServer, APIGroupVersion, RecommendedOptions
from pyop.apiserver.authentication.delegating import RequestCredentials
from pyop.testing import TestAPIServer

PROXY_HEADERS = [
    ("X-Remote-User", "alice"),
    ("X-Remote-Group", "wardle-readers"),
    ("X-Remote-Group", "team-a"),
    ("X-Remote-Extra-Scopes", "read"),
]


def forbidden_user(body: dict) -> str:
    """The user a 403 names (`User "x" cannot ...`): who the server took the request to be."""
    message = body["message"]
    return message.split('User "', 1)[1].split('"', 1)[0]


async def test_request_header_identity_from_the_front_proxy_certificate(
    server: AggregatedServer, front_proxy: CertificateAuthority, core: TestAPIServer
) -> None:
    status, body = await call(
        server, "GET", FLUNDERS, certificate=front_proxy.client("front-proxy-client"), headers=PROXY_HEADERS
    )
    assert status == 403, body
    assert forbidden_user(body) == "alice"
    # What the cluster was asked: alice, her groups and extra, from the headers.
    reviews = [r for r in core.requests if r.resource == "subjectaccessreviews"]
    assert len(reviews) == 1


async def test_request_header_user_is_authorized_by_the_cluster(
    server: AggregatedServer, front_proxy: CertificateAuthority, core: TestAPIServer
) -> None:
    await grant(core, "User", "alice", ["list"])
    status, body = await call(
        server, "GET", FLUNDERS, certificate=front_proxy.client("front-proxy-client"), headers=PROXY_HEADERS
    )
    assert status == 200, body
    assert body["kind"] == "FlunderList"
    group_status, _ = await call(
        server,
        "GET",
        FLUNDERS,
        certificate=front_proxy.client("front-proxy-client"),
        headers=[("X-Remote-User", "carol"), ("X-Remote-Group", "wardle-readers")],
    )
    assert group_status == 403  # alice's binding, not the group's


async def test_request_header_groups_and_extra_reach_the_cluster(
    server: AggregatedServer, front_proxy: CertificateAuthority, core: TestAPIServer
) -> None:
    await grant(core, "Group", "team-a", ["list"])
    status, body = await call(
        server, "GET", FLUNDERS, certificate=front_proxy.client("front-proxy-client"), headers=PROXY_HEADERS
    )
    assert status == 200, body  # alice is in team-a because the X-Remote-Group header said so
    user = await server.config.authenticator.authenticate_credentials(
        RequestCredentials(
            {"X-Remote-User": "alice", "X-Remote-Extra-Acme.com%2Fscopes": "read"},
            lambda name: {"x-remote-user": ["alice"], "x-remote-extra-acme.com%2fscopes": ["read", "write"]}.get(
                name.lower(), []
            ),
            front_proxy_der(front_proxy),
        )
    )
    assert (user.username, user.extra) == ("alice", {"acme.com/scopes": ["read", "write"]})


async def test_certificate_with_a_name_not_allowed_is_unauthorized(
    server: AggregatedServer, front_proxy: CertificateAuthority
) -> None:
    status, body = await call(
        server, "GET", FLUNDERS, certificate=front_proxy.client("someone-else"), headers=PROXY_HEADERS
    )
    assert status == 401
    assert body["reason"] == "Unauthorized"


async def test_identity_headers_without_the_certificate_are_ignored(server: AggregatedServer) -> None:
    status, body = await call(server, "GET", FLUNDERS, headers=PROXY_HEADERS)
    assert status == 403
    assert forbidden_user(body) == "system:anonymous"


async def test_client_ca_file_certificates_name_the_user_and_groups(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions, tmp_path: Path
) -> None:
    clients = CertificateAuthority.create(tmp_path / "clients", "clients")
    options.authentication.client_ca_file = str(clients.ca_file)
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        await grant(core, "Group", "wardle-admins", ["list"])
        status, body = await call(server, "GET", FLUNDERS, certificate=clients.client("dave", ("wardle-admins",)))
        assert status == 200, body
        status, body = await call(server, "GET", FLUNDERS, certificate=clients.client("erin"))
        assert status == 403
        assert forbidden_user(body) == "erin"


async def test_bearer_tokens_are_reviewed_once_per_cache_ttl(server: AggregatedServer, core: TestAPIServer) -> None:
    core.add_user("bob-token", "bob")
    await grant(core, "User", "bob", ["list"])
    core.reset_requests()
    for _ in range(3):
        status, body = await call(server, "GET", FLUNDERS, token="bob-token")
        assert status == 200, body
    assert core.count_requests(resource="tokenreviews") == 1
    assert core.count_requests(resource="subjectaccessreviews") == 1  # the allowed answer is cached too


async def test_without_a_cache_every_token_is_reviewed(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions
) -> None:
    options.authentication.cache_ttl = 0
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        core.add_user("bob-token", "bob")
        core.reset_requests()
        for _ in range(3):
            await call(server, "GET", FLUNDERS, token="bob-token")
        assert core.count_requests(resource="tokenreviews") == 3


async def test_a_token_the_cluster_does_not_know_is_unauthorized(server: AggregatedServer, core: TestAPIServer) -> None:
    core.reset_requests()
    for _ in range(2):
        status, body = await call(server, "GET", FLUNDERS, token="not-a-token")
        assert status == 401
        assert body["reason"] == "Unauthorized"
    assert core.count_requests(resource="tokenreviews") == 1  # the rejection is cached as well


async def test_anonymous_requests_can_be_refused(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions
) -> None:
    options.authentication.anonymous = False
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        status, _ = await call(server, "GET", FLUNDERS)
        assert status == 401
        status, _ = await call(server, "GET", "/healthz")
        assert status == 401


async def grant(core: TestAPIServer, kind: str, name: str, verbs: list[str]) -> None:
    """A ClusterRole on flunders and its binding to a user or group, in the cluster."""
    from pyop.client import Client, Transport

    role_name = f"flunders-{kind.lower()}-{name}"
    async with Client(Transport(core.client_config())) as client:
        dynamic = client.dynamic
        roles = await dynamic.resource("rbac.authorization.k8s.io/v1", "ClusterRole")
        bindings = await dynamic.resource("rbac.authorization.k8s.io/v1", "ClusterRoleBinding")
        await dynamic.create(
            roles,
            {
                "metadata": {"name": role_name},
                "rules": [{"apiGroups": ["wardle.example.com"], "resources": ["flunders"], "verbs": verbs}],
            },
        )
        await dynamic.create(
            bindings,
            {
                "metadata": {"name": role_name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}],
            },
        )


def front_proxy_der(front_proxy: CertificateAuthority) -> bytes:
    import ssl

    return ssl.PEM_cert_to_DER_cert(front_proxy.client("front-proxy-client").certificate_file.read_text())
