"""Deadlines and errors of proxied requests, as kube-apiserver and kube-aggregator answer them: a server that does
not answer within the request timeout (``--request-timeout``, or the request's ``timeout`` parameter) is a 504
``Timeout`` Status; a ``timeout`` that is not a Go duration a 400; a server that cannot be reached a plain-text 503
naming Go's dial error; watches are long-running and outlive the timeout."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from testing_server.helpers import GUARD, Api

from aggregator.backend import GROUP, GROUP_VERSION, VERSION
from pyop.testing import TestAPIServer
from pyop.testing.aggregator.deadline import long_running

FLUNDERS = f"/apis/{GROUP_VERSION}/namespaces/default/flunders"
LIST = {"kind": "FlunderList", "apiVersion": GROUP_VERSION, "metadata": {"resourceVersion": "1"}, "items": []}
TIMED_OUT = "Timeout: request did not complete within requested timeout - context deadline exceeded"


def event(name: str) -> bytes:
    obj = {"kind": "Flunder", "apiVersion": GROUP_VERSION, "metadata": {"name": name, "namespace": "default"}}
    return json.dumps({"type": "ADDED", "object": obj}).encode() + b"\n"


async def slow_server(request: web.Request) -> web.StreamResponse:
    """Answers lists at once, ``.../flunders/slow`` never, a watch with an event now and one 1.2 s later."""
    if request.path.endswith("/slow"):
        await asyncio.sleep(GUARD)
    if request.query.get("watch") == "true":
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(event("first"))
        await asyncio.sleep(1.2)
        await response.write(event("later"))
        await response.write_eof()
        return response
    return web.json_response(LIST)


@dataclass
class Slow:
    url: str
    runner: web.AppRunner


@pytest_asyncio.fixture
async def slow(server: TestAPIServer) -> AsyncIterator[Slow]:
    """A server of wardle's group/version registered (its certificate not verified); the proxy's request timeout
    shortened to 0.5 s."""
    assert server.certificate is not None
    folder = server.kubeconfig_path.parent / "slow"
    folder.mkdir()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", slow_server)
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
    await runner.setup()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    site = web.TCPSite(runner, "127.0.0.1", port, ssl_context=server.certificate.server_context(folder))
    await site.start()
    url = f"https://127.0.0.1:{port}"
    await server.register_api_service(GROUP, VERSION, url, insecure_skip_tls_verify=True)
    server.aggregator.proxy.request_timeout = 0.5
    try:
        yield Slow(url, runner)
    finally:
        await runner.cleanup()


async def test_an_unanswered_request_is_a_504_timeout_status(api: Api, slow: Slow) -> None:
    started = time.monotonic()
    status, body = await api.get(f"{FLUNDERS}/slow")
    assert time.monotonic() - started < GUARD / 2
    assert status == 504
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": TIMED_OUT,
        "reason": "Timeout",
        "details": {},
        "code": 504,
    }
    status, listed = await api.get(FLUNDERS)  # the server itself still answers in time
    assert (status, listed["kind"]) == (200, "FlunderList")


async def test_the_timeout_parameter_shortens_the_deadline(server: TestAPIServer, api: Api, slow: Slow) -> None:
    server.aggregator.proxy.request_timeout = 60.0
    started = time.monotonic()
    status, body = await api.get(f"{FLUNDERS}/slow?timeout=300ms")
    assert (status, body["reason"], body["message"]) == (504, "Timeout", TIMED_OUT)
    assert time.monotonic() - started < GUARD / 2


async def test_a_timeout_that_is_not_a_go_duration_is_a_400(api: Api, slow: Slow) -> None:
    status, body = await api.get(f"{FLUNDERS}?timeout=soon")
    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == 'invalid timeout specified in the request URL - time: invalid duration "soon"'


async def test_a_watch_outlives_the_request_timeout(api: Api, slow: Slow) -> None:
    async with api.session.get(f"{FLUNDERS}?watch=true") as response:
        assert response.status == 200
        lines = [json.loads(line) async for line in response.content if line.strip()]
    assert [line["object"]["metadata"]["name"] for line in lines] == ["first", "later"]  # 1.2 s > 0.5 s


async def test_an_unreachable_server_is_a_503_naming_the_dial_error(
    server: TestAPIServer, api: Api, slow: Slow
) -> None:
    """Available when checked, gone since (the availability controller stopped, so the APIService stays
    Available): kube's proxy transport error ``error trying to reach service: <Go's error>``, as plain text."""
    assert server.aggregator.availability is not None
    await server.aggregator.availability.stop()
    server.aggregator.availability = None
    await slow.runner.cleanup()
    await server.aggregator.proxy.close()  # no pooled connection to the stopped server
    async with api.session.get(FLUNDERS) as response:
        text = await response.text()
        assert response.status == 503
        assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    port = slow.url.rsplit(":", 1)[1]
    assert text == f"error trying to reach service: dial tcp 127.0.0.1:{port}: connect: connection refused\n"


@pytest.mark.parametrize(
    ("path", "query", "expected"),
    [
        (FLUNDERS, {}, False),
        (FLUNDERS, {"watch": "true"}, True),
        (FLUNDERS, {"watch": "false"}, False),
        (FLUNDERS, {"watch": "0"}, False),
        (f"/apis/{GROUP_VERSION}/watch/namespaces/default/flunders", {}, True),
        (f"{FLUNDERS}/one/log", {}, True),
        (f"{FLUNDERS}/one/exec", {}, True),
        (f"{FLUNDERS}/one/status", {}, False),
        (f"/apis/{GROUP_VERSION}/fischers/one/portforward", {}, True),
        (f"/apis/{GROUP_VERSION}/namespaces/default", {}, False),
    ],
)
def test_long_running_requests_are_kube_apiservers(path: str, query: dict[str, Any], expected: bool) -> None:
    assert long_running(path, query) is expected
