"""Requests under an aggregated group/version reach the aggregated server as kube-aggregator sends them: with the
front-proxy certificate and the caller's identity in X-Remote-* headers (never the caller's credentials or claims),
bodies and watches streamed, after the test server authenticated and authorized the caller."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from testing_server.helpers import GUARD, Api, connector

from aggregator.backend import GROUP_VERSION, Backend
from aggregator.conftest import API_SERVICE
from pyop.testing import TestAPIServer

FLUNDERS = f"/apis/{GROUP_VERSION}/namespaces/default/flunders"
USER, GROUPS = "pyop-test-admin", "system:masters,system:authenticated"


def _echoed(obj: dict[str, Any]) -> tuple[str, str, str]:
    annotations = obj["metadata"]["annotations"]
    return (
        annotations["wardle.example.com/user"],
        annotations["wardle.example.com/groups"],
        annotations["wardle.example.com/client-cn"],
    )


async def test_create_get_and_list_reach_the_server_as_the_caller(
    api: Api, backend: Backend, registered: dict[str, Any]
) -> None:
    status, created = await api.post(FLUNDERS, {"metadata": {"name": "one"}, "spec": {"size": 3}})
    assert status == 201, created
    assert _echoed(created) == (USER, GROUPS, "front-proxy-client")
    assert backend.flunders[("default", "one")]["spec"] == {"size": 3}
    status, got = await api.get(f"{FLUNDERS}/one")
    assert status == 200 and got["spec"] == {"size": 3}
    status, listed = await api.get(FLUNDERS, limit="5")
    assert status == 200 and [item["metadata"]["name"] for item in listed["items"]] == ["one"]
    assert backend.seen[-1].query == "limit=5"
    status, missing = await api.get(f"{FLUNDERS}/absent")
    assert (status, missing["reason"]) == (404, "NotFound")  # the server's own Status, passed through


async def test_credentials_and_claimed_identities_are_not_forwarded(
    server: TestAPIServer, backend: Backend, registered: dict[str, Any]
) -> None:
    headers = {
        "Authorization": f"Bearer {server.token}",
        "X-Remote-User": "mallory",
        "X-Remote-Group": "system:masters",
        "X-Remote-Extra-Scopes": "everything",
        "Impersonate-User": "mallory",
        "Connection": "keep-alive, X-Hop",
        "X-Hop": "dropped",
        "X-Kept": "kept",
    }
    async with (
        aiohttp.ClientSession(base_url=server.url, connector=connector(server)) as session,
        session.get(FLUNDERS, headers=headers) as response,
    ):
        assert response.status == 200, await response.text()
    seen = backend.seen[-1]
    assert (seen.user, seen.groups, seen.extra) == (USER, GROUPS.split(","), {})
    forwarded = {name.lower() for name in seen.headers}
    assert not forwarded & {"authorization", "impersonate-user", "x-hop"}
    assert seen.headers["X-Kept"] == "kept"
    assert seen.headers["X-Forwarded-For"] == "127.0.0.1"


async def test_a_watch_streams_through_and_ends_with_its_client(
    server: TestAPIServer, api: Api, backend: Backend, registered: dict[str, Any]
) -> None:
    await api.post(FLUNDERS, {"metadata": {"name": "before"}})
    watch = await api.watch(FLUNDERS, resourceVersion="0")
    first = await watch.next()
    assert first is not None and (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "before")
    await api.post(FLUNDERS, {"metadata": {"name": "after"}})
    second = await watch.next()
    assert second is not None and second["object"]["metadata"]["name"] == "after"
    assert backend.open_watches == 1
    watch.response.close()
    async with asyncio.timeout(GUARD):
        while backend.open_watches:
            await asyncio.sleep(0.05)  # the proxy notices its client is gone and ends the upstream watch


async def test_rbac_decides_before_the_request_is_proxied(
    server: TestAPIServer, api: Api, backend: Backend, registered: dict[str, Any]
) -> None:
    """kube-apiserver authorizes every request (aggregated ones included) before its aggregator proxies it."""
    server.add_user("reader-token", "reader")
    async with aiohttp.ClientSession(
        base_url=server.url, headers={"Authorization": "Bearer reader-token"}, connector=connector(server)
    ) as session:
        reader = Api(session)

        def flunder_requests() -> int:
            return sum(1 for seen in backend.seen if seen.path.endswith("/flunders"))

        before = flunder_requests()
        status, body = await reader.get(FLUNDERS)
        assert status == 403, body
        assert body["message"] == (
            f'flunders.{GROUP_VERSION.split("/")[0]} is forbidden: User "reader" cannot list resource "flunders" '
            'in API group "wardle.example.com" in the namespace "default"'
        )
        assert flunder_requests() == before  # refused here: the server never saw it
        await api.post(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
            {
                "metadata": {"name": "flunder-reader"},
                "rules": [{"apiGroups": ["wardle.example.com"], "resources": ["flunders"], "verbs": ["list"]}],
            },
        )
        await api.post(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            {
                "metadata": {"name": "flunder-reader"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "flunder-reader"},
                "subjects": [{"kind": "User", "name": "reader", "apiGroup": "rbac.authorization.k8s.io"}],
            },
        )
        status, body = await reader.get(FLUNDERS)
        assert status == 200, body
        assert (backend.seen[-1].user, backend.seen[-1].groups) == ("reader", ["system:authenticated"])


async def test_an_unauthenticated_request_is_refused_here(
    server: TestAPIServer, backend: Backend, registered: dict[str, Any]
) -> None:
    async with (
        aiohttp.ClientSession(base_url=server.url, connector=connector(server)) as session,
        session.get(FLUNDERS) as response,
    ):
        assert response.status == 401
    assert not any(seen.path.endswith("/flunders") for seen in backend.seen)


async def test_a_server_whose_certificate_the_ca_bundle_does_not_sign_is_unreachable(
    server: TestAPIServer, api: Api, backend: Backend
) -> None:
    """The availability check does not verify the server's certificate (kube's does not either), the proxy does:
    Available, yet every request a 503 naming the verification failure."""
    assert backend.serving_ca is not None
    other = await server.register_api_service(
        GROUP_VERSION.split("/")[0], "v1alpha1", backend.url, ca_bundle=server.aggregator.request_header_ca
    )
    assert other["status"]["conditions"][0]["status"] == "True"
    async with api.session.get(FLUNDERS) as response:
        assert response.status == 503
        text = await response.text()
    assert text.startswith("error trying to reach service: tls: failed to verify certificate"), text
    assert other["metadata"]["name"] == API_SERVICE


async def test_request_bodies_stream_to_the_server(api: Api, backend: Backend, registered: dict[str, Any]) -> None:
    large = {"metadata": {"name": "large"}, "spec": {"data": "x" * 3_000_000}}

    async def chunks() -> Any:
        encoded = json.dumps(large).encode()
        for start in range(0, len(encoded), 65536):
            yield encoded[start : start + 65536]

    async with api.session.post(FLUNDERS, data=chunks(), headers={"Content-Type": "application/json"}) as response:
        assert response.status == 201, await response.text()
    assert len(backend.flunders[("default", "large")]["spec"]["data"]) == 3_000_000


async def test_connections_to_the_server_are_kept_alive(api: Api, backend: Backend, registered: dict[str, Any]) -> None:
    for _ in range(20):
        status, _ = await api.get(FLUNDERS)
        assert status == 200
    proxied = [seen for seen in backend.seen if seen.path.endswith("/flunders")]
    assert len(proxied) == 20
    # pooled connections, not one handshake per request (the aggregator's own discovery fetches share the pool)
    assert len({seen.peer_port for seen in proxied}) <= 2


async def test_a_get_is_sent_again_when_a_pooled_connection_was_closed(server: TestAPIServer, api: Api) -> None:
    """A server that drops a kept-alive connection when the next request arrives (as after an idle timeout):
    the proxy sends the GET again on a new connection, as Go's transport does, instead of answering 503."""
    body = b'{"kind":"FlunderList","apiVersion":"wardle.example.com/v1alpha1","metadata":{},"items":[]}'
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        served = 0
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                if served == 1:  # the second request on this connection: hang up instead
                    break
                writer.write(answer)
                await writer.drain()
                served += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    folder = server.kubeconfig_path.parent / "dropping"
    folder.mkdir()
    assert server.certificate is not None
    context = server.certificate.server_context(folder)  # any certificate: the APIService skips verification
    listener = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
    port = listener.sockets[0].getsockname()[1]
    try:
        await server.register_api_service(
            GROUP_VERSION.split("/")[0], "v1alpha1", f"https://127.0.0.1:{port}", insecure_skip_tls_verify=True
        )
        for _ in range(3):
            status, listed = await api.get(FLUNDERS)
            assert (status, listed["kind"]) == (200, "FlunderList")
        assert connections >= 3  # availability check, then a new connection each time the old one was dropped
    finally:
        listener.close()
        await listener.wait_closed()
