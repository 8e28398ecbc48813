"""Pods', services' and nodes' `proxy` subresources (issue 12) over HTTP: kube's resolution and errors
(pkg/registry/core/{pod,service,node} ResourceLocation), its proxy handler's exchange (k8s.io/apimachinery
util/proxy: upgradeaware.go, transport.go) and its authorization (RequestInfo's verbs, the `name:port` name).

The process behind the port is a test's handler: a raw asyncio stream handler (`pod_streams.on_port`) or a real
aiohttp server on 127.0.0.1 (`forward_port`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from pyop.testing import TestAPIServer
from pyop.testing.builtins.pod_streaming import PortWriter
from testing_server.helpers import Api
from testing_server.proxy_backend import header, serve_backend

NS = "/api/v1/namespaces/default"
POD_IP = "10.244.0.7"


async def make_pod(
    api: Api,
    name: str,
    *,
    ports: tuple[int, ...] = (8080,),
    ip: str | None = POD_IP,
    labels: dict[str, str] | None = None,
) -> None:
    container: dict[str, Any] = {"name": "app", "image": "x:1"}
    if ports:
        container["ports"] = [{"containerPort": port} for port in ports]
    body = {"metadata": {"name": name, "labels": labels or {}}, "spec": {"containers": [container]}}
    await api.create_ok(f"{NS}/pods", body)
    if ip is not None:
        status = {"status": {"podIP": ip, "podIPs": [{"ip": ip}]}}
        code, answer = await api.patch(f"{NS}/pods/{name}/status", status, "application/merge-patch+json")
        assert code == 200, answer


@pytest_asyncio.fixture
async def backend() -> AsyncIterator[int]:
    """A real HTTP server on 127.0.0.1 (its port), for `forward_port`."""
    async with serve_backend() as port:
        yield port


# --- discovery ---------------------------------------------------------------------------------------------------


async def test_discovery_lists_the_three_proxy_subresources_as_kube_does(api: Api) -> None:
    status, document = await api.get("/api/v1")
    assert status == 200
    entries = {entry["name"]: entry for entry in document["resources"]}
    verbs = ["create", "delete", "get", "patch", "update"]
    assert entries["pods/proxy"] == {
        "name": "pods/proxy",
        "singularName": "",
        "namespaced": True,
        "kind": "PodProxyOptions",
        "verbs": verbs,
    }
    assert (entries["services/proxy"]["kind"], entries["services/proxy"]["verbs"]) == ("ServiceProxyOptions", verbs)
    assert entries["services/proxy"]["namespaced"] is True
    assert (entries["nodes/proxy"]["kind"], entries["nodes/proxy"]["namespaced"]) == ("NodeProxyOptions", False)
    accept = {"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}
    async with api.session.get("/api", headers=accept) as response:
        aggregated = await response.json()
    resources = {entry["resource"]: entry for entry in aggregated["items"][0]["versions"][0]["resources"]}
    for plural, kind in (
        ("pods", "PodProxyOptions"),
        ("services", "ServiceProxyOptions"),
        ("nodes", "NodeProxyOptions"),
    ):
        (proxy,) = [entry for entry in resources[plural]["subresources"] if entry["subresource"] == "proxy"]
        assert proxy == {
            "subresource": "proxy",
            "responseKind": {"group": "", "version": "v1", "kind": kind},
            "verbs": verbs,
        }


# --- pods: the exchange ------------------------------------------------------------------------------------------


async def test_a_pod_proxy_forwards_method_path_query_headers_and_body(
    server: TestAPIServer, api: Api, backend: int
) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    path = f"{NS}/pods/web:8080/proxy/api/things/"
    headers = {"X-Custom": "one", "Content-Type": "text/plain", "Connection": "X-Custom-Hop", "X-Custom-Hop": "1"}
    async with api.session.post(path + "?a=1&b=%20two&path=ignored", data=b"payload", headers=headers) as response:
        assert response.status == 200
        answer = await response.json()
        assert response.headers["X-Backend"] == "yes"
        assert "Access-Control-Allow-Origin" not in response.headers  # corsRemovingTransport
    assert answer["method"] == "POST"
    assert answer["path"] == "/api/things/?a=1&b=%20two&path=ignored"  # the raw query; the trailing slash kept
    assert answer["body"] == "payload"
    assert header(answer, "X-Custom") == ["one"]
    assert header(answer, "X-Custom-Hop") == []  # named by Connection: hop-by-hop
    assert header(answer, "Authorization") == []  # consumed by kube-apiserver's authentication
    assert header(answer, "X-Forwarded-For") == ["127.0.0.1"]
    assert header(answer, "X-Forwarded-Uri") == ["/api/v1/namespaces/default/pods/web:8080/proxy/api/things/"]
    assert header(answer, "Content-Length") == ["7"]
    assert header(answer, "Host") == [f"127.0.0.1:{server.url.rsplit(':', 1)[1]}"]  # the client's Host
    async with api.session.get(f"{NS}/pods/web:8080/proxy/api//items/./../a%20b") as response:
        assert (await response.json())["path"] == "/api/a%20b"  # path.Join'd, then escaped again


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE", "OPTIONS"])
async def test_every_proxy_method_reaches_the_pod(server: TestAPIServer, api: Api, backend: int, method: str) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    data = b"" if method == "GET" else b"x=1"
    async with api.session.request(method, f"{NS}/pods/web/proxy/thing", data=data) as response:
        assert response.status == 200
        answer = await response.json()
    assert (answer["method"], answer["path"], answer["body"]) == (method, "/thing", data.decode())


async def test_head_gets_the_headers_without_a_body(server: TestAPIServer, api: Api, backend: int) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    async with api.session.head(f"{NS}/pods/web/proxy/thing") as response:
        assert response.status == 200
        assert response.headers["X-Backend"] == "yes"
        assert await response.read() == b""


async def test_the_port_defaults_to_the_first_declared_one_and_the_scheme_form_is_accepted(
    server: TestAPIServer, api: Api
) -> None:
    seen: list[int] = []

    def answering(port: int) -> Any:
        async def handler(reader: asyncio.StreamReader, writer: PortWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            seen.append(port)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

        return handler

    await make_pod(api, "web", ports=(9000, 9001))
    for port in (9000, 9001, 8443):
        server.pod_streams.on_port("default", "web", port, answering(port))
    for name in ("web", "web:9001", "https:web:8443", "http:web:9000"):
        async with api.session.get(f"{NS}/pods/{name}/proxy/") as response:
            assert (response.status, await response.text()) == (200, "ok")
    assert seen == [9000, 9001, 8443, 9000]


async def test_an_answer_without_a_content_type_gets_the_one_gos_server_sniffs(server: TestAPIServer, api: Api) -> None:
    bodies = {"text": b"plain words", "png": b"\x89PNG\r\n\x1a\n" + bytes(16), "html": b"<!doctype html><p>"}

    async def handler(reader: asyncio.StreamReader, writer: PortWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        body = bodies[head.split(b" ")[1].decode().strip("/")]
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    await make_pod(api, "web")
    server.pod_streams.on_port("default", "web", 8080, handler)
    expected = {"text": "text/plain; charset=utf-8", "png": "image/png", "html": "text/html; charset=utf-8"}
    for name, content_type in expected.items():
        async with api.session.get(f"{NS}/pods/web/proxy/{name}") as response:
            assert response.headers["Content-Type"] == content_type
            assert await response.read() == bodies[name]


async def test_a_pod_without_ports_is_reached_on_the_schemes_default_port(server: TestAPIServer, api: Api) -> None:
    async def handler(reader: asyncio.StreamReader, writer: PortWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")

    await make_pod(api, "bare", ports=())
    server.pod_streams.on_port("default", "bare", 80, handler)
    async with api.session.get(f"{NS}/pods/bare/proxy/x") as response:
        assert response.status == 204
    async with api.session.get(f"{NS}/pods/https:bare:/proxy/x") as response:  # https's default: 443, nothing there
        assert response.status == 503
        assert (await response.json())["message"] == (
            f"error trying to reach service: dial tcp {POD_IP}:443: connect: connection refused"
        )


async def test_the_proxy_root_without_a_slash_is_redirected(server: TestAPIServer, api: Api, backend: int) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    async with api.session.get(f"{NS}/pods/web/proxy?x=1", allow_redirects=False) as response:
        assert response.status == 301
        assert response.headers["Location"] == f"{NS}/pods/web/proxy/?x=1"
    async with api.session.post(f"{NS}/pods/web/proxy", data=b"") as response:  # only GET and HEAD are redirected
        assert (await response.json())["path"] == "/"


async def test_a_redirect_on_the_backend_host_stays_under_the_proxy_path(
    server: TestAPIServer, api: Api, backend: int
) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    cases = {
        "/login": f"{NS}/pods/web:8080/proxy/login",
        f"http://{POD_IP}:8080/next/": f"{NS}/pods/web:8080/proxy/next/",
        "relative/page": "relative/page",
        "https://elsewhere.example/x": "https://elsewhere.example/x",
        f"{NS}/pods/web:8080/proxy/already": f"{NS}/pods/web:8080/proxy/already",
    }
    for target, expected in cases.items():
        async with api.session.get(
            f"{NS}/pods/web:8080/proxy/redirect", params={"to": target}, allow_redirects=False
        ) as response:
            assert response.status == 302
            assert response.headers["Location"] == expected, target


async def test_a_gzip_answer_is_decoded_when_the_client_asked_for_no_encoding(
    server: TestAPIServer, api: Api, backend: int
) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    async with api.session.get(f"{NS}/pods/web/proxy/gzip", skip_auto_headers=["Accept-Encoding"]) as response:
        assert response.status == 200
        assert "Content-Encoding" not in response.headers  # Go's transport asked for gzip and decoded it
        assert await response.read() == b"zipped text"
    async with api.session.get(f"{NS}/pods/web/proxy/", skip_auto_headers=["Accept-Encoding"]) as response:
        assert header(await response.json(), "Accept-Encoding") == ["gzip"]
    async with api.session.get(f"{NS}/pods/web/proxy/gzip", headers={"Accept-Encoding": "gzip"}) as response:
        assert response.headers["Content-Encoding"] == "gzip"  # the client's own: passed through
        assert await response.read() == b"zipped text"  # aiohttp decodes it


async def test_the_answer_streams_as_the_backend_writes_it(server: TestAPIServer, api: Api) -> None:
    release = asyncio.Event()

    async def slow(reader: asyncio.StreamReader, writer: PortWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n")
        writer.write(b"6\r\nfirst\n\r\n")
        await release.wait()  # the client has the first chunk before the second exists
        writer.write(b"7\r\nsecond\n\r\n0\r\n\r\n")

    await make_pod(api, "web")
    server.pod_streams.on_port("default", "web", 8080, slow)
    async with api.session.get(f"{NS}/pods/web/proxy/events") as response:
        assert response.status == 200
        assert await asyncio.wait_for(response.content.readline(), 10) == b"first\n"
        release.set()
        assert await asyncio.wait_for(response.content.read(), 10) == b"second\n"


async def test_a_websocket_upgrade_is_spliced_through(server: TestAPIServer, api: Api, backend: int) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    async with api.session.ws_connect(f"{NS}/pods/web/proxy/ws") as ws:
        await ws.send_str("hello")
        assert (await asyncio.wait_for(ws.receive(), 10)).data == "echo: hello"


async def test_an_html_pages_links_are_rewritten_under_the_proxy_path(
    server: TestAPIServer, api: Api, backend: int
) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    prefix = f"{NS}/pods/web:8080/proxy"
    expected = (
        f'<html><head><link rel="stylesheet" href="{prefix}/static/site.css"></head><body>'
        f'<a href="{prefix}/docs/?q=1&amp;r=2">docs</a> <img src="logo.png"/> <a href="https://example.com/">out</a>'
        "<script>document.write('<a href=\"/inline\">')</script></body></HTML>"
    )
    async with api.session.get(f"{prefix}/page") as response:
        assert response.status == 200
        assert response.headers["Content-Length"] == str(len(expected))
        assert await response.text() == expected
    async with api.session.get(f"{prefix}/page?gzip=1", headers={"Accept-Encoding": "gzip"}) as response:
        assert response.headers["Content-Encoding"] == "gzip"  # decoded, rewritten and encoded again
        assert await response.text() == expected
    async with api.session.get(f"{prefix}/page?gzip=1", skip_auto_headers=["Accept-Encoding"]) as response:
        assert "Content-Encoding" not in response.headers
        assert await response.text() == expected


async def test_an_upgrade_the_backend_refuses_or_ignores(server: TestAPIServer, api: Api) -> None:
    """tryUpgrade: a 4xx/5xx answer is relayed as it came, a non-101 success is kube's 500, nothing listening is
    the dial error itself (the upgrade path has no Transport to wrap it as a 503)."""

    def answering(head: bytes) -> Any:
        async def handler(reader: asyncio.StreamReader, writer: PortWriter) -> None:
            request = await reader.readuntil(b"\r\n\r\n")
            assert b"Upgrade: websocket" in request and b"X-Forwarded-For: 127.0.0.1" in request
            writer.write(head)

        return handler

    await make_pod(api, "web", ports=(8080, 8081, 8082))
    server.pod_streams.on_port(
        "default", "web", 8080, answering(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 4\r\n\r\nnope")
    )
    server.pod_streams.on_port("default", "web", 8081, answering(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
    upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13"}
    upgrade["Sec-WebSocket-Key"] = "dGhlIHNhbXBsZSBub25jZQ=="
    async with api.session.get(f"{NS}/pods/web:8080/proxy/ws", headers=upgrade) as response:
        assert (response.status, await response.text()) == (403, "nope")
    async with api.session.get(f"{NS}/pods/web:8081/proxy/ws", headers=upgrade) as response:
        body = await response.json()
        assert (response.status, body["message"], "reason" in body) == (
            500,
            "invalid upgrade response: status code 200",
            False,
        )
    async with api.session.get(f"{NS}/pods/web:8082/proxy/ws", headers=upgrade) as response:
        body = await response.json()
        assert (response.status, body["message"]) == (500, f"dial tcp {POD_IP}:8082: connect: connection refused")


# --- pods: kube's errors -----------------------------------------------------------------------------------------


async def status_of(api: Api, path: str, method: str = "GET") -> tuple[int, str, str]:
    async with api.session.request(method, path) as response:
        text = await response.text()
        if response.content_type == "application/json":
            body = json.loads(text)
            return response.status, body.get("reason", ""), body["message"]
        return response.status, "", text


async def test_pod_proxy_errors_are_kubes(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web")
    await make_pod(api, "pending", ip=None)
    await make_pod(api, "local", ip="127.0.0.1")
    assert await status_of(api, f"{NS}/pods/nobody/proxy/") == (404, "NotFound", 'pods "nobody" not found')
    assert await status_of(api, f"{NS}/pods/ftp:web:21/proxy/") == (
        400,
        "BadRequest",
        'invalid pod request "ftp:web:21"',
    )
    assert await status_of(api, f"{NS}/pods/a:b:c:d/proxy/") == (400, "BadRequest", 'invalid pod request "a:b:c:d"')
    assert await status_of(api, f"{NS}/pods/pending/proxy/") == (400, "BadRequest", "address not allowed")
    assert await status_of(api, f"{NS}/pods/local/proxy/") == (400, "BadRequest", "address not allowed")
    assert await status_of(api, f"{NS}/pods/web/proxy/") == (
        503,
        "ServiceUnavailable",
        f"error trying to reach service: dial tcp {POD_IP}:8080: connect: connection refused",
    )
    # A port name: kube-apiserver's proxy handler cannot parse the URL it builds (normalizeLocation) and panics.
    assert await status_of(api, f"{NS}/pods/web:http/proxy/") == (
        500,
        "",
        "This request caused apiserver to panic. Look in the logs for details.",
    )
    assert (await status_of(api, f"{NS}/pods/web/proxy/", "TRACE"))[0] == 405


async def test_a_forwarded_port_that_refuses_and_a_handler_that_hangs_up(
    server: TestAPIServer, api: Api, unused_tcp_port: int
) -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: PortWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")

    async def garbage(reader: asyncio.StreamReader, writer: PortWriter) -> None:
        writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")

    await make_pod(api, "web", ports=(8080, 8081, 8082))
    server.pod_streams.forward_port("default", "web", 8080, target_port=unused_tcp_port)
    server.pod_streams.on_port("default", "web", 8081, hang_up)
    server.pod_streams.on_port("default", "web", 8082, garbage)
    refused = f"error trying to reach service: dial tcp {POD_IP}:8080: connect: connection refused"
    assert await status_of(api, f"{NS}/pods/web:8080/proxy/") == (503, "ServiceUnavailable", refused)
    assert await status_of(api, f"{NS}/pods/web:8081/proxy/") == (
        503,
        "ServiceUnavailable",
        "error trying to reach service: EOF",
    )
    code, reason, message = await status_of(api, f"{NS}/pods/web:8082/proxy/")
    assert (code, reason) == (503, "ServiceUnavailable")
    assert message.startswith(
        "error trying to reach service: net/http: HTTP/1.x transport connection broken: malformed"
    )


async def test_proxy_paths_of_other_resources_are_not_found(api: Api) -> None:
    await api.create_ok(f"{NS}/configmaps", {"metadata": {"name": "c"}, "data": {}})
    assert (await status_of(api, f"{NS}/configmaps/c/proxy/x"))[0] == 404
    assert (await status_of(api, "/api/v1/pods/web/proxy/x"))[0] == 404  # pods are namespaced


# --- authorization -----------------------------------------------------------------------------------------------


async def bind_role(api: Api, user: str, rules: list[dict[str, Any]]) -> None:
    await api.create_ok(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {"metadata": {"name": user}, "rules": rules}
    )
    binding = {
        "metadata": {"name": user},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": user},
        "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}],
    }
    await api.create_ok("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", binding)


async def test_rbac_sees_the_methods_verb_and_the_name_with_its_port(
    server: TestAPIServer, api: Api, backend: int
) -> None:
    await make_pod(api, "web")
    server.pod_streams.forward_port("default", "web", 8080, target_port=backend)
    server.add_user("alice-token", "alice")
    rule = {"apiGroups": [""], "resources": ["pods/proxy"], "verbs": ["get"], "resourceNames": ["web:8080"]}
    await bind_role(api, "alice", [rule])
    alice = {"Authorization": "Bearer alice-token"}

    async def as_alice(method: str, name: str) -> tuple[int, Any]:
        async with api.session.request(method, f"{NS}/pods/{name}/proxy/x", headers=alice) as response:
            return response.status, await response.json() if response.content_type == "application/json" else None

    assert (await as_alice("GET", "web:8080"))[0] == 200
    assert (await as_alice("HEAD", "web:8080"))[0] == 200  # HEAD is a get
    status, body = await as_alice("GET", "web")  # another name, though the same pod and port
    assert status == 403
    assert body["message"] == (
        'pods "web" is forbidden: User "alice" cannot get resource "pods/proxy" in API group "" in the namespace '
        '"default"'
    )
    status, body = await as_alice("POST", "web:8080")
    assert status == 403
    assert 'cannot create resource "pods/proxy"' in body["message"]
    status, body = await as_alice("OPTIONS", "web:8080")  # no verb: only a `*` rule allows it
    assert status == 403


# --- services ----------------------------------------------------------------------------------------------------


async def make_service(api: Api, *, endpoints: list[dict[str, Any]] | None) -> None:
    ports = [{"name": "http", "port": 80, "targetPort": 8080}, {"name": "admin", "port": 9000, "targetPort": 9090}]
    await api.create_ok(
        f"{NS}/services", {"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": ports}}
    )
    if endpoints is not None:
        await api.create_ok(f"{NS}/endpoints", {"metadata": {"name": "web"}, "subsets": endpoints})


def subset(ip: str, pod: str, namespace: str = "default") -> dict[str, Any]:
    return {
        "addresses": [{"ip": ip, "targetRef": {"kind": "Pod", "namespace": namespace, "name": pod}}],
        "ports": [{"name": "http", "port": 8080}, {"name": "admin", "port": 9090}],
    }


async def test_a_service_proxy_reaches_an_endpoint_pods_target_port(
    server: TestAPIServer, api: Api, backend: int
) -> None:
    await make_pod(api, "web-1")
    await make_service(api, endpoints=[subset(POD_IP, "web-1")])
    server.pod_streams.forward_port("default", "web-1", 8080, target_port=backend)

    async def answer_admin(reader: asyncio.StreamReader, writer: PortWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nadmin")

    server.pod_streams.on_port("default", "web-1", 9090, answer_admin)
    for name in ("web:80", "web:http", "http:web:http"):
        async with api.session.get(f"{NS}/services/{name}/proxy/status?x=1") as response:
            assert response.status == 200, name
            answer = await response.json()
            assert answer["path"] == "/status?x=1"
            assert header(answer, "X-Forwarded-Uri") == [f"{NS}/services/{name}/proxy/status"]
    for name in ("web:9000", "web:admin"):
        async with api.session.get(f"{NS}/services/{name}/proxy/") as response:
            assert (response.status, await response.text()) == (200, "admin")


async def test_service_proxy_errors_are_kubes(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1")
    await make_pod(api, "other", ip="10.244.0.99")
    assert await status_of(api, f"{NS}/services/web:80/proxy/") == (404, "NotFound", 'services "web" not found')
    await make_service(api, endpoints=None)
    assert await status_of(api, f"{NS}/services/web:81/proxy/") == (
        503,
        "ServiceUnavailable",
        'no service port 81 found for service "web"',
    )
    assert await status_of(api, f"{NS}/services/web:80/proxy/") == (404, "NotFound", 'endpoints "web" not found')
    await api.create_ok(f"{NS}/endpoints", {"metadata": {"name": "web"}})
    assert await status_of(api, f"{NS}/services/web:80/proxy/") == (
        503,
        "ServiceUnavailable",
        'no endpoints available for service "web"',
    )
    # An address whose pod has another IP, one in another namespace, one without a targetRef, a not-ready one.
    subsets = [subset(POD_IP, "other"), subset(POD_IP, "web-1", namespace="kube-system")]
    subsets.append({"addresses": [{"ip": POD_IP}], "ports": [{"name": "http", "port": 8080}]})
    ready_later = subset(POD_IP, "web-1")  # a valid address, but not ready: never picked
    subsets.append({"notReadyAddresses": ready_later["addresses"], "ports": ready_later["ports"]})
    status, current = await api.get(f"{NS}/endpoints/web")
    assert status == 200
    status, _ = await api.put(f"{NS}/endpoints/web", {**current, "subsets": subsets})
    assert status == 200
    assert await status_of(api, f"{NS}/services/web:80/proxy/") == (
        503,
        "ServiceUnavailable",
        'no endpoints available for service "web:80"',  # kube names the whole id here
    )
    assert await status_of(api, f"{NS}/services/web:nope/proxy/") == (
        503,
        "ServiceUnavailable",
        'no endpoints available for service "web:nope"',
    )
    await api.put(
        f"{NS}/endpoints/web", {**(await api.get(f"{NS}/endpoints/web"))[1], "subsets": [subset(POD_IP, "web-1")]}
    )
    assert await status_of(api, f"{NS}/services/web/proxy/") == (  # no port: the port with no name; there is none
        503,
        "ServiceUnavailable",
        'no endpoints available for service "web"',
    )
    assert await status_of(api, f"{NS}/services/web:80/proxy/") == (
        503,
        "ServiceUnavailable",
        f"error trying to reach service: dial tcp {POD_IP}:8080: connect: connection refused",
    )


# --- nodes -------------------------------------------------------------------------------------------------------


async def make_node(api: Api, name: str, addresses: list[dict[str, str]], kubelet_port: int | None = None) -> None:
    await api.create_ok("/api/v1/nodes", {"metadata": {"name": name}})
    status: dict[str, Any] = {"addresses": addresses}
    if kubelet_port is not None:
        status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": kubelet_port}}
    code, answer = await api.patch(f"/api/v1/nodes/{name}/status", {"status": status}, "application/merge-patch+json")
    assert code == 200, answer


async def test_a_node_proxy_reaches_the_nodes_kubelet_handler(server: TestAPIServer, api: Api, backend: int) -> None:
    await make_node(api, "node-a", [{"type": "InternalIP", "address": "10.0.0.5"}])
    server.node_proxies.forward_kubelet("node-a", target_port=backend)

    async def exporter(reader: asyncio.StreamReader, writer: PortWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\n\r\nup 1\nx 2")

    server.node_proxies.on_port("node-a", 9100, exporter)
    for name in ("node-a", "node-a:10250", "https:node-a:10250"):
        async with api.session.get(f"/api/v1/nodes/{name}/proxy/stats/summary") as response:
            assert response.status == 200, name
            answer = await response.json()
            assert answer["path"] == "/stats/summary"
            assert header(answer, "X-Forwarded-Uri") == [f"/api/v1/nodes/{name}/proxy/stats/summary"]
    async with api.session.get("/api/v1/nodes/node-a:9100/proxy/metrics") as response:
        assert (response.status, await response.text()) == (200, "up 1\nx 2")


async def test_node_proxy_errors_are_kubes(server: TestAPIServer, api: Api) -> None:
    assert await status_of(api, "/api/v1/nodes/ghost/proxy/") == (404, "NotFound", 'nodes "ghost" not found')
    await make_node(api, "bare", [])
    assert await status_of(api, "/api/v1/nodes/bare/proxy/") == (
        500,
        "",
        "no preferred addresses found; known addresses: []",
    )
    await make_node(
        api, "node-b", [{"type": "ExternalIP", "address": "34.1.2.3"}, {"type": "Hostname", "address": "node-b"}], 10255
    )
    refused = "error trying to reach service: dial tcp node-b:10255: connect: connection refused"
    assert await status_of(api, "/api/v1/nodes/node-b/proxy/healthz") == (503, "ServiceUnavailable", refused)
    await make_node(api, "loop", [{"type": "InternalIP", "address": "127.0.0.1"}])
    assert (await status_of(api, "/api/v1/nodes/loop/proxy/"))[:2] == (503, "ServiceUnavailable")  # the kubelet's
    assert await status_of(api, "/api/v1/nodes/loop:9100/proxy/") == (400, "BadRequest", "address not allowed")
    assert await status_of(api, "/api/v1/nodes/ftp:node-b:21/proxy/") == (
        400,
        "BadRequest",
        'invalid node request "ftp:node-b:21"',
    )


# --- the official kubernetes client ------------------------------------------------------------------------------


async def test_the_official_clients_connect_proxy_calls(server: TestAPIServer, api: Api, backend: int) -> None:
    kubernetes = pytest.importorskip("kubernetes", reason="the official kubernetes client drives this test")
    from testing_server.helpers import official_client

    await make_pod(api, "web-1")
    await make_service(api, endpoints=[subset(POD_IP, "web-1")])
    await make_node(api, "node-a", [{"type": "InternalIP", "address": "10.0.0.5"}])
    server.pod_streams.forward_port("default", "web-1", 8080, target_port=backend)
    server.node_proxies.forward_kubelet("node-a", target_port=backend)
    core = kubernetes.client.CoreV1Api(official_client(server))

    async def call(method: Any, *args: Any) -> Any:
        return (await asyncio.to_thread(method, *args, _preload_content=False)).data  # the body as it came

    answer = json.loads(await call(core.connect_get_namespaced_pod_proxy_with_path, "web-1:8080", "default", "a/b"))
    assert (answer["method"], answer["path"]) == ("GET", "/a/b")
    answer = json.loads(await call(core.connect_post_namespaced_pod_proxy_with_path, "web-1", "default", "submit"))
    assert answer["method"] == "POST"
    answer = json.loads(await call(core.connect_get_namespaced_service_proxy_with_path, "web:http", "default", "x"))
    assert answer["path"] == "/x"
    answer = json.loads(await call(core.connect_delete_namespaced_service_proxy_with_path, "web:80", "default", "y"))
    assert (answer["method"], answer["path"]) == ("DELETE", "/y")
    answer = json.loads(await call(core.connect_get_node_proxy_with_path, "node-a", "healthz"))
    assert answer["path"] == "/healthz"
    with pytest.raises(kubernetes.client.exceptions.ApiException) as raised:
        await call(core.connect_get_namespaced_pod_proxy_with_path, "web-1:9999", "default", "z")
    assert raised.value.status == 503
    assert json.loads(raised.value.body)["reason"] == "ServiceUnavailable"
