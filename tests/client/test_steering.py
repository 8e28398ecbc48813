"""Requests that cannot be steered by the values in them: names, namespaces and subresources that would leave
their path segment, query values, header values with line breaks, proxy credentials. Each attempt is refused
before anything reaches the server (asserted on the test API server's request log)."""

from __future__ import annotations

import base64

import pytest
from client_helpers import Widget, widget
from test_wire import RawServer, keep_alive_echo, serve

from pyop.api.paths import check_path_segment, path_segment_problems
from pyop.client import BUILTIN, BadRequestError, Client, ClientConfig, InvalidPathSegment, Transport
from pyop.client.dynamic import DynamicClient
from pyop.testing import TestAPIServer

__all__ = ["serve"]

CONFIGMAPS = BUILTIN["v1/ConfigMap"]
SECRETS = BUILTIN["v1/Secret"]

STEERING_NAMES = [
    "../../kube-system/secrets/db-password",
    "..",
    ".",
    "a/b",
    "x?dryRun=All&propagationPolicy=Orphan",
    "x#fragment",
    "%2e%2e",
    "a%2Fb",
    "a b",
    "a\r\nX-Injected: 1",
    "a\x00b",
]


@pytest.mark.parametrize("value", STEERING_NAMES)
def test_the_shared_validator_refuses_what_would_leave_a_segment(value: str) -> None:
    assert path_segment_problems(value)
    with pytest.raises(InvalidPathSegment, match="invalid name"):
        check_path_segment(value, "name")


@pytest.mark.parametrize("value", ["db-password", "system:controller:x", "a.b", "...", "x..y", "UPPER_ok~"])
def test_names_that_are_one_segment_pass(value: str) -> None:
    assert check_path_segment(value, "name") == value
    assert path_segment_problems(value) == []


async def test_the_cross_namespace_secret_read_is_refused_before_any_request(test_api_server: TestAPIServer) -> None:
    server = test_api_server
    async with Transport(server.client_config()) as transport:
        dynamic = DynamicClient(transport)
        await dynamic.create(SECRETS, {"metadata": {"name": "db-password", "namespace": "kube-system"}})
        await dynamic.create(CONFIGMAPS, {"metadata": {"name": "own", "namespace": "default"}})
        server.reset_requests()
        with pytest.raises(InvalidPathSegment, match=r"invalid ConfigMap name '\.\./\.\./kube-system.*'/'"):
            await dynamic.get(CONFIGMAPS, "../../kube-system/secrets/db-password", "default")
        assert server.requests == []


@pytest.mark.parametrize("name", STEERING_NAMES)
async def test_every_verb_refuses_a_steering_name_without_sending(test_api_server: TestAPIServer, name: str) -> None:
    server = test_api_server
    async with Transport(server.client_config()) as transport:
        dynamic = DynamicClient(transport)
        await dynamic.create(CONFIGMAPS, {"metadata": {"name": "x", "namespace": "default"}})
        server.reset_requests()
        attempts = [
            dynamic.get(CONFIGMAPS, name, "default"),
            dynamic.delete(CONFIGMAPS, name, "default"),
            dynamic.patch(CONFIGMAPS, name, {"data": {"a": "1"}}, "default"),
            dynamic.update(CONFIGMAPS, {"metadata": {"name": name, "namespace": "default"}}),
            dynamic.get(CONFIGMAPS, "x", name),  # as a namespace
            dynamic.list(CONFIGMAPS, name),
            dynamic.get(CONFIGMAPS, "x", "default", subresource=name),
        ]
        for attempt in attempts:
            with pytest.raises(InvalidPathSegment):
                await attempt
        assert server.requests == []
        assert (await dynamic.get(CONFIGMAPS, "x", "default"))["metadata"].get("deletionTimestamp") is None


async def test_the_typed_client_refuses_too(test_api_server: TestAPIServer) -> None:
    from client_helpers import WIDGET_CRD

    server = test_api_server
    server.add_crd(WIDGET_CRD)
    async with Client(Transport(server.client_config())) as client:
        await client.create(widget("w"))
        server.reset_requests()
        with pytest.raises(InvalidPathSegment, match="may not contain '\\?'"):
            await client.delete(Widget, "w?propagationPolicy=Orphan", "default")
        assert server.requests == []


async def test_query_values_are_encoded_not_interpreted(test_api_server: TestAPIServer) -> None:
    server = test_api_server
    async with Transport(server.client_config()) as transport:
        dynamic = DynamicClient(transport)
        await dynamic.create(CONFIGMAPS, {"metadata": {"name": "a", "namespace": "default", "labels": {"k": "v"}}})
        server.reset_requests()
        # The server gets the whole string as the selector (and refuses it), not a selector plus a limit.
        with pytest.raises(BadRequestError, match='Invalid value: "v&limit"'):  # `&limit` reached the parser
            await dynamic.list(CONFIGMAPS, "default", label_selector="k=v&limit=0#x")
        assert len(server.requests) == 1


async def test_a_token_with_a_line_break_is_refused_before_sending(test_api_server: TestAPIServer) -> None:
    with pytest.raises(ValueError, match="bearer token contains a line break") as refused:
        ClientConfig(server=test_api_server.url, token="t\r\nX-Injected: 1")
    assert "X-Injected" not in str(refused.value)  # the credential stays out of the message

    class Provider:
        async def authorization(self) -> str | None:
            return "Bearer t\nX-Injected: 1"

        async def refresh(self) -> bool:
            return False

    test_api_server.reset_requests()
    async with Transport(ClientConfig(server=test_api_server.url, auth=Provider())) as transport:
        dynamic = DynamicClient(transport)
        with pytest.raises(ValueError, match="Authorization value from Provider contains a line break"):
            await dynamic.get(CONFIGMAPS, "x", "default")
    assert test_api_server.requests == []


async def test_server_url_credentials_never_reach_a_proxy_request_line(serve) -> None:  # type: ignore[no-untyped-def]
    proxy: RawServer = await serve(keep_alive_echo)
    config = ClientConfig(server="http://user:s3cret@api.internal:8080", proxy=proxy.url)
    async with Transport(config) as transport:
        answered = await transport.request("GET", "/api/v1/pods")
    assert answered["line"] == "GET http://api.internal:8080/api/v1/pods HTTP/1.1"
    head = "\n".join(proxy.heads[0])
    assert "s3cret" not in proxy.heads[0][0]
    assert f"Authorization: Basic {base64.b64encode(b'user:s3cret').decode()}" in head


async def test_the_test_server_refuses_encoded_steering_segments_with_the_same_check(
    test_api_server: TestAPIServer,
) -> None:
    """A client that percent-encodes what pyop's client refuses (`%25`, `%2e%2e`) gets a 400 from the test server,
    which applies the same segment check to the decoded path."""
    import aiohttp

    server = test_api_server
    headers = {"Authorization": f"Bearer {server.token}"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=server.ssl_context() or True)) as session:
        for raw in ("a%25b", "%3Fx", "%20"):
            url = f"{server.url}/api/v1/namespaces/default/configmaps/{raw}"
            async with session.get(url, headers=headers, skip_auto_headers=()) as response:
                assert response.status == 400, raw
                assert "invalid resource name" in (await response.json())["message"]


@pytest.mark.parametrize("api_version", ["../../api/v1", "a/../b/v1", "example.com/v1?x=1", "g/%2e%2e"])
async def test_a_steering_api_version_is_refused_before_discovery(
    test_api_server: TestAPIServer, api_version: str
) -> None:
    from pyop.client import NoKindMatchError

    server = test_api_server
    async with Transport(server.client_config()) as transport:
        dynamic = DynamicClient(transport)
        server.reset_requests()
        with pytest.raises(NoKindMatchError, match="malformed apiVersion"):
            await dynamic.resource(api_version, "Secret")
        assert server.requests == []
