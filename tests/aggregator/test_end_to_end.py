"""kubectl and pyop's client -> the test server's aggregator -> a pyop.apiserver aggregated server (tests/apiserver's
wardle group), which authenticates the front proxy and asks the test server back about tokens and access."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
from apiserver.helpers import CertificateAuthority, wardle_group
from testing_server.helpers import GUARD, Api, connector

from aggregator.helpers import wait_for_condition
from pyop.apiserver import AggregatedServer, RecommendedOptions
from pyop.testing import TestAPIServer

FLUNDERS = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"
API_SERVICE = "v1alpha1.wardle.example.com"


@pytest_asyncio.fixture
async def wardle(server: TestAPIServer) -> AsyncIterator[AggregatedServer]:
    async with AggregatedServer.for_testing([wardle_group()], server) as aggregated:
        yield aggregated


@contextlib.asynccontextmanager
async def api_as(server: TestAPIServer, token: str) -> AsyncIterator[Api]:
    """The Api helper for the test server as the user of ``token``."""
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session:
        yield Api(session)


def _flunder(name: str, size: int = 1) -> dict[str, object]:
    return {
        "apiVersion": "wardle.example.com/v1alpha1",
        "kind": "Flunder",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"size": size},
    }


async def test_a_watch_streams_from_the_aggregated_server(api: Api, wardle: AggregatedServer) -> None:
    created = await api.create_ok(FLUNDERS, _flunder("first"))
    watch = await api.watch(FLUNDERS, resourceVersion=created["metadata"]["resourceVersion"])
    try:
        await api.create_ok(FLUNDERS, _flunder("second", 3))
        event = await watch.next_of("ADDED")
        assert (event["object"]["metadata"]["name"], event["object"]["spec"]["size"]) == ("second", 3)
    finally:
        watch.response.close()


async def test_authorization_is_asked_of_the_test_server_as_the_caller(
    server: TestAPIServer, wardle: AggregatedServer
) -> None:
    """The test server authorizes the caller (RBAC) and proxies; the aggregated server asks the same question back
    with a SubjectAccessReview for the caller the front proxy named."""
    server.add_user("carol-token", "carol")
    rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/default"
    async with api_as(server, server.token) as admin:
        await admin.create_ok(
            f"{rbac}/roles",
            {
                "metadata": {"name": "flunder-lister"},
                "rules": [{"apiGroups": ["wardle.example.com"], "resources": ["flunders"], "verbs": ["list"]}],
            },
        )
        await admin.create_ok(
            f"{rbac}/rolebindings",
            {
                "metadata": {"name": "flunder-lister"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "flunder-lister"},
                "subjects": [{"kind": "User", "name": "carol", "apiGroup": "rbac.authorization.k8s.io"}],
            },
        )
    server.reset_requests()
    async with api_as(server, "carol-token") as carol:
        status, listed = await carol.get(FLUNDERS)
        assert (status, listed["items"]) == (200, [])
        status, denied = await carol.post(FLUNDERS, _flunder("nope"))
        assert status == 403  # refused by the test server's RBAC before it reached the aggregated server
        assert 'User "carol" cannot create resource "flunders"' in denied["message"]
    assert server.count_requests(verb="create", resource="subjectaccessreviews") == 1  # the list, asked back


async def test_a_server_that_does_not_trust_the_front_proxy_is_unavailable(
    server: TestAPIServer, api: Api, tmp_path: Path
) -> None:
    """An aggregated server given another request-header CA refuses the test server's front-proxy certificate: the
    availability check fails and requests are 503s, as with a mismatched --requestheader-client-ca-file."""
    options = RecommendedOptions()
    options.authentication.requestheader_client_ca_file = str(CertificateAuthority.create(tmp_path, "other").ca_file)
    options.authentication.requestheader_allowed_names = ["front-proxy-client"]
    async with AggregatedServer.for_testing([wardle_group()], server, options=options):
        down = await wait_for_condition(server, API_SERVICE, "False", "FailedDiscoveryCheck")
        assert down["message"].startswith("failing or missing response from https://127.0.0.1:")
        async with api.session.get(FLUNDERS) as response:
            assert (response.status, await response.text()) == (503, "service unavailable\n")


async def test_kubectl_watch_through_the_aggregator(
    server: TestAPIServer, wardle: AggregatedServer, tmp_path: Path
) -> None:
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl is not on PATH: this test drives the servers with the real kubectl")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "KUBECONFIG": str(server.kubeconfig_path)}
    process = await asyncio.create_subprocess_exec(
        binary,
        "get",
        "flunders",
        "--watch",
        "--output-watch-events",
        "-o",
        "json",
        "--cache-dir",
        str(tmp_path / "cache"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None
    try:
        async with asyncio.timeout(GUARD * 3):
            while not wardle.operations.watchers:  # kubectl's watch reached the aggregated server
                await asyncio.sleep(0.05)
            async with api_as(server, server.token) as admin:
                await admin.create_ok(FLUNDERS, _flunder("watched", 5))
            text = b""
            while True:
                text += await process.stdout.read(4096)
                try:
                    event = json.loads(text)
                    break
                except ValueError:
                    continue
        assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "watched")
    finally:
        process.kill()
        await process.wait()


async def test_kubectl_explain_reads_the_servers_openapi(
    server: TestAPIServer, wardle: AggregatedServer, tmp_path: Path
) -> None:
    """/openapi/v3 of the test server lists the aggregated group/version; its document comes from the server."""
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl is not on PATH: this test drives the servers with the real kubectl")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "KUBECONFIG": str(server.kubeconfig_path)}
    process = await asyncio.create_subprocess_exec(
        binary,
        "explain",
        "flunders.spec",
        "--cache-dir",
        str(tmp_path / "cache"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(process.communicate(), GUARD * 3)
    assert process.returncode == 0, err.decode()
    text = out.decode()
    assert "KIND:       Flunder" in text and "size\t<integer>" in text
