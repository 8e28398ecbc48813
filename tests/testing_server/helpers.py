"""Test helpers: a thin aiohttp client for the test API server, watch reading, object builders."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest

GUARD = 10.0  # seconds: only a failure guard, never an expectation


def connector(server: Any) -> aiohttp.TCPConnector:
    """A connector that trusts the test server's certificate (plain http needs none)."""
    return aiohttp.TCPConnector(ssl=server.ssl_context() or True)


async def tls_exchange(url: str, context: ssl.SSLContext) -> tuple[str, str, bytes]:
    """(TLS version, cipher suite, whole answer) of one unauthenticated ``GET /healthz`` on a new connection to the
    ``https://host:port`` server ``url``, through ``context``."""
    host, port = url.removeprefix("https://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port), ssl=context, server_hostname=host)
    try:
        ssl_object = writer.get_extra_info("ssl_object")
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: " + host.encode() + b"\r\nConnection: close\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(), GUARD)
        name, version, _ = ssl_object.cipher()
        return version, name, answer
    finally:
        writer.close()


def official_client(server: Any, token: str | None = None) -> Any:
    """An ApiClient of the official `kubernetes` client for the test server, with its token (or ``token``) and CA;
    the calling test skips where that client is not installed. The client is synchronous: call it in a thread."""
    kubernetes = pytest.importorskip("kubernetes", reason="the official kubernetes client drives this test")
    configuration = kubernetes.client.Configuration()
    configuration.host = server.url
    configuration.api_key = {"authorization": f"Bearer {token or server.token}"}
    configuration.ssl_ca_cert = str(server.ca_file) if server.ca_file else None
    return kubernetes.client.ApiClient(configuration)


class Api:
    """HTTP helper: every call returns (status, decoded JSON body)."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session

    async def call(
        self, method: str, path: str, body: Any = None, *, content_type: str = "application/json", **params: Any
    ) -> tuple[int, Any]:
        data = None if body is None else (body if isinstance(body, str) else json.dumps(body))
        headers = {"Content-Type": content_type} if data is not None else {}
        async with self.session.request(method, path, data=data, headers=headers, params=params or None) as response:
            text = await response.text()
            return response.status, json.loads(text) if text else None

    async def get(self, path: str, **params: Any) -> tuple[int, Any]:
        return await self.call("GET", path, **params)

    async def post(self, path: str, body: Any, **params: Any) -> tuple[int, Any]:
        return await self.call("POST", path, body, **params)

    async def put(self, path: str, body: Any, **params: Any) -> tuple[int, Any]:
        return await self.call("PUT", path, body, **params)

    async def patch(self, path: str, body: Any, content_type: str, **params: Any) -> tuple[int, Any]:
        return await self.call("PATCH", path, body, content_type=content_type, **params)

    async def delete(self, path: str, body: Any = None, **params: Any) -> tuple[int, Any]:
        return await self.call("DELETE", path, body, **params)

    async def create_ok(self, path: str, body: Any, **params: Any) -> dict[str, Any]:
        status, obj = await self.post(path, body, **params)
        assert status == 201, obj
        return obj

    async def watch(self, path: str, **params: Any) -> Watch:
        params = {"watch": "true", **params}
        response = await self.session.get(path, params=params, timeout=aiohttp.ClientTimeout(total=None))
        assert response.status == 200, await response.text()
        return Watch(response)


class Watch:
    """Reads newline-delimited watch events; every read is bounded by GUARD."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response

    async def next(self) -> dict[str, Any] | None:
        """The next event, or None when the server ended the stream."""
        line = await asyncio.wait_for(self.response.content.readline(), GUARD)
        return json.loads(line) if line else None

    async def next_of(self, *types: str) -> dict[str, Any]:
        """The next event of one of ``types``, skipping others (e.g. bookmarks)."""
        while True:
            event = await self.next()
            assert event is not None, f"stream ended while waiting for {types}"
            if event["type"] in types:
                return event

    async def rest(self) -> list[dict[str, Any]]:
        """All events until the server ends the stream."""
        events = []
        while (event := await self.next()) is not None:
            events.append(event)
        return events

    def close(self) -> None:
        self.response.close()


async def eventually(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Poll an HTTP-observable condition (asynchronous controllers such as the GC); GUARD bounds it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GUARD
    while not await check():
        if loop.time() > deadline:
            pytest.fail(f"timed out waiting for: {what}")
        await asyncio.sleep(0.01)


def configmap(name: str, labels: dict[str, str] | None = None, data: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels or {}},
        "data": data or {"k": "v"},
    }


def deployment(name: str, replicas: int = 1, containers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": containers or [{"name": "main", "image": "nginx:1"}]},
            },
        },
    }


CM = "/api/v1/namespaces/default/configmaps"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"


TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
POD_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]


def admitted_pod_spec(spec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """What kube's Pod admission adds to a spec that names no account, tolerations or priority: the name of the
    token volume it made (random) and the fields, to compare a created Pod with (tests/testing_server/
    test_pod_admission.py checks each)."""
    token = next(v["name"] for v in spec.get("volumes") or [] if v["name"].startswith("kube-api-access-"))
    fields = {
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "tolerations": POD_TOLERATIONS,
        "priority": 0,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    return token, fields


def token_mount(token: str) -> dict[str, Any]:
    return {"name": token, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}


@contextlib.asynccontextmanager
async def api_for(server: Any) -> AsyncIterator[Api]:
    """An `Api` for a server a test starts itself (the `api` fixture's, for the `server` fixture)."""
    headers = {"Authorization": f"Bearer {server.token}"}
    async with aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session:
        yield Api(session)
