"""/healthz, /livez, /readyz with named checks and ?verbose, and /metrics' request counters."""

from __future__ import annotations

from apiserver.helpers import FLUNDERS, call
from pyop.apiserver import AggregatedServer
from pyop.testing import TestAPIServer


async def test_health_endpoints_list_their_checks(server: AggregatedServer) -> None:
    assert await call(server, "GET", "/livez?verbose") == (200, "[+]ping ok\n[+]log ok\nlivez check passed\n")
    assert await call(server, "GET", "/readyz?verbose") == (
        200,
        "[+]ping ok\n[+]log ok\n[+]shutdown ok\nreadyz check passed\n",
    )


async def test_a_failing_check_fails_its_endpoints_only(server: AggregatedServer, core: TestAPIServer) -> None:
    async def storage() -> None:
        raise ConnectionError("etcd unreachable")

    server.config.health.add("etcd", storage, endpoints=("readyz", "healthz"))
    status, text = await call(server, "GET", "/readyz?verbose")
    assert status == 500
    assert "[-]etcd failed: reason withheld\n" in text
    assert text.endswith("readyz check failed\n")
    assert "etcd unreachable" not in text
    assert await call(server, "GET", "/livez") == (200, "ok")
    assert await call(server, "GET", "/readyz?exclude=etcd") == (200, "ok")
    # One check by name (not an always-allowed path: the admin asks).
    assert await call(server, "GET", "/readyz/ping", token=core.token) == (200, "ok")
    status, _ = await call(server, "GET", "/readyz/etcd", token=core.token)
    assert status == 500
    status, _ = await call(server, "GET", "/readyz/nope", token=core.token)
    assert status == 404


async def test_request_counters(server: AggregatedServer, core: TestAPIServer) -> None:
    await call(server, "POST", FLUNDERS, token=core.token, body={"metadata": {"name": "m"}})
    await call(server, "POST", FLUNDERS, token=core.token, body={"metadata": {"name": "m"}})
    await call(server, "GET", FLUNDERS, token=core.token)
    status, text = await call(server, "GET", "/metrics", token=core.token)
    assert status == 200
    lines = text.splitlines()
    common = (
        'component="apiserver",dry_run="",group="wardle.example.com",resource="flunders",scope="namespace",'
        'subresource=""'
    )
    assert f'apiserver_request_total{{code="201",{common},verb="POST",version="v1alpha1"}} 1.0' in lines
    assert f'apiserver_request_total{{code="409",{common},verb="POST",version="v1alpha1"}} 1.0' in lines
    assert f'apiserver_request_total{{code="200",{common},verb="LIST",version="v1alpha1"}} 1.0' in lines
    assert any(line.startswith("apiserver_request_duration_seconds_bucket{") for line in lines)


async def test_delegation_counters(server: AggregatedServer, core: TestAPIServer) -> None:
    core.add_user("bob-token", "bob")
    for _ in range(2):
        await call(server, "GET", FLUNDERS, token="bob-token")  # reviewed once each (then cached), denied
    _, text = await call(server, "GET", "/metrics", token=core.token)
    lines = text.splitlines()
    assert 'apiserver_delegated_authn_request_total{code="201"} 2.0' in lines  # bob's token, and the reader's
    assert 'apiserver_delegated_authz_request_total{code="201"} 1.0' in lines
