"""GenericAPIServer on its own: a registry of one custom kind behind pluggable authentication, authorization and
hooks, served over HTTP, with no kube-apiserver pieces (no built-in kinds, RBAC, webhooks or controllers)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from pyop.apiserver.authentication.authenticator import TokenAuthenticator
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.authorization.attributes import Attributes, forbidden
from pyop.apiserver.authorization.authorizer import AttributesAuthorizer
from pyop.apiserver.endpoints.routing import DiscoveryPath, Target
from pyop.apiserver.registry.operations import Operations
from pyop.apiserver.registry.resources import ResourceRegistry, types_from_crd
from pyop.apiserver.server.generic import GenericAPIServer
from pyop.apiserver.storage.store import Store
from pyop.testing.crds import schemaless_crd

TOKEN = "t0ken"
GADGETS = "/apis/example.com/v1/gadgets"


def _operations() -> Operations:
    crd = schemaless_crd("example.com", "Gadget", "gadgets", scope="Cluster")
    return Operations(
        Store(100),
        ResourceRegistry(types_from_crd(crd)),
        clock=lambda: datetime(2026, 1, 1, tzinfo=UTC),
        users={},
        bookmark_interval=1.0,
    )


class Recording(GenericAPIServer):
    """Records what the hooks see; refuses writes by anyone but `admin` through an Attributes authorizer."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.decided: list[Attributes] = []
        super().__init__(
            _operations(),
            authenticator=TokenAuthenticator({TOKEN: UserInfo("admin"), "other": UserInfo("other")}),
            authorizer=AttributesAuthorizer(self._decide),
            version={"major": "1", "minor": "0", "gitVersion": "v1.0.0"},
        )

    async def _decide(self, attributes: Attributes) -> None:
        self.decided.append(attributes)
        if attributes.user.username != "admin" and attributes.verb not in ("get", "list", "watch"):
            raise forbidden(attributes, "only admin writes")

    def routed(self, request: web.BaseRequest, target: Target | DiscoveryPath | None, verb: str) -> None:
        self.seen.append((request.path, verb))

    async def intercept(
        self, request: web.BaseRequest, user: UserInfo, target: Target | DiscoveryPath | None, verb: str
    ) -> web.StreamResponse | None:
        if request.headers.get("X-Intercept"):
            return web.Response(status=418, text=f"intercepted {verb} for {user.username}")
        return None


@pytest.fixture
async def server() -> AsyncIterator[Recording]:
    server = Recording()

    async def healthz(request: web.BaseRequest) -> web.StreamResponse:
        return web.Response(text="ok")

    async def metrics(request: web.BaseRequest) -> web.StreamResponse:
        return web.Response(text="metrics")

    server.add_path("/healthz", healthz, public=True)
    server.add_path("/metrics", metrics)
    await server.listen()
    yield server
    await server.stop()


async def _call(
    server: GenericAPIServer, method: str, path: str, *, token: str | None = TOKEN, **kwargs: Any
) -> tuple[int, Any]:
    headers = dict(kwargs.pop("headers", {}))
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, server.url + path, headers=headers, **kwargs) as response,
    ):
        text = await response.text()
        is_json = response.content_type == "application/json"
        return response.status, (await response.json() if is_json else text)


async def test_crud_over_http_with_kubernetes_semantics(server: Recording) -> None:
    status, created = await _call(
        server,
        "POST",
        GADGETS,
        json={"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g1"}, "spec": {"size": 3}},
    )
    assert status == 201
    assert created["metadata"]["resourceVersion"] and created["metadata"]["uid"]
    status, listed = await _call(server, "GET", GADGETS)
    assert status == 200 and [item["metadata"]["name"] for item in listed["items"]] == ["g1"]
    status, duplicate = await _call(server, "POST", GADGETS, json={"metadata": {"name": "g1"}})
    assert status == 409 and duplicate["reason"] == "AlreadyExists"
    assert ("/apis/example.com/v1/gadgets", "create") in server.seen


async def test_no_credentials_is_401_but_public_paths_answer(server: Recording) -> None:
    status, body = await _call(server, "GET", GADGETS, token=None)
    assert status == 401 and body["kind"] == "Status" and body["reason"] == "Unauthorized"
    assert await _call(server, "GET", "/healthz", token=None) == (200, "ok")
    status, _ = await _call(server, "GET", "/metrics", token=None)
    assert status == 401  # an added path that is not public is behind authentication
    assert await _call(server, "GET", "/metrics") == (200, "metrics")


async def test_the_authorizer_decides_on_request_attributes(server: Recording) -> None:
    status, body = await _call(server, "POST", GADGETS, token="other", json={"metadata": {"name": "g2"}})
    assert status == 403 and body["reason"] == "Forbidden"
    attributes = server.decided[-1]
    assert (attributes.verb, attributes.api_group, attributes.resource) == ("create", "example.com", "gadgets")
    status, _ = await _call(server, "GET", GADGETS, token="other")
    assert status == 200  # reads are allowed to anyone by this authorizer
    assert server.decided[-1].verb == "list"
    assert server.store.get("gadgets.example.com", "", "g2") is None


async def test_intercept_ends_the_request_after_authorization(server: Recording) -> None:
    status, text = await _call(server, "GET", GADGETS, headers={"X-Intercept": "1"})
    assert (status, text) == (418, "intercepted list for admin")
    status, _ = await _call(server, "POST", GADGETS, token="other", headers={"X-Intercept": "1"}, json={})
    assert status == 403  # authorization comes first


async def test_discovery_version_and_not_found(server: Recording) -> None:
    status, groups = await _call(server, "GET", "/apis")
    assert status == 200 and [group["name"] for group in groups["groups"]] == ["example.com"]
    status, resources = await _call(server, "GET", "/apis/example.com/v1")
    assert [resource["name"] for resource in resources["resources"]] == ["gadgets", "gadgets/status"]
    assert (await _call(server, "GET", "/version"))[1]["gitVersion"] == "v1.0.0"
    status, body = await _call(server, "GET", "/nowhere")
    assert status == 404 and body["reason"] == "NotFound"


async def test_no_token_subresource_without_its_handler(server: Recording) -> None:
    status, _ = await _call(server, "POST", "/apis/example.com/v1/gadgets/g1/token", json={})
    assert status == 404


async def test_stop_listening_then_listen_again_keeps_state(server: Recording) -> None:
    await _call(server, "POST", GADGETS, json={"metadata": {"name": "kept"}})
    url = server.url
    await server.stop_listening()
    assert not server.listening
    with pytest.raises(aiohttp.ClientConnectionError):
        await _call(server, "GET", GADGETS)
    await server.listen_again()
    assert server.url == url
    status, listed = await _call(server, "GET", GADGETS)
    assert status == 200 and [item["metadata"]["name"] for item in listed["items"]] == ["kept"]
