"""Health probes and the metrics endpoint answer with the right content: named checks, readiness that waits for
the caches, controller-runtime's metric names, HTTPS with a certificate, TokenReview/SubjectAccessReview."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import aiohttp
import pytest
from mgr_helpers import Counting, Widget, eventually, manager_for, widget
from prometheus_client.parser import text_string_to_metric_families

from pyop.manager import parse_bind_address, ping
from pyop.manager.certificates import write_self_signed_certificate
from pyop.testing import TestAPIServer

LOCAL = "127.0.0.1:0"


async def get(url: str, *, token: str | None = None, ssl_context: ssl.SSLContext | bool = True) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers, ssl=ssl_context) as response:
        return response.status, await response.text()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text exposition, parsed by the client library's own parser."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_probes_report_named_checks_and_wait_for_caches(server: TestAPIServer) -> None:
    healthy = True

    def database() -> bool:
        return healthy

    async def broken() -> None:
        raise ConnectionError("no route to the database")

    manager = manager_for(server, health_probe_bind_address=LOCAL)
    manager.add_healthz_check("ping", ping)
    manager.add_healthz_check("database", database)
    manager.add_readyz_check("broken", broken)
    manager.controller_for(Widget).complete(Counting())
    with pytest.raises(ValueError, match="already exists"):
        manager.add_healthz_check("ping", ping)
    server.faults.respond(500, method="GET", path_regex="/widgets", times=None)  # the cache cannot list yet
    async with manager:
        assert manager.probe_server is not None
        base = manager.probe_server.url
        assert await get(f"{base}/healthz") == (200, "ok")
        assert await get(f"{base}/healthz?verbose") == (200, "[+]ping ok\n[+]database ok\nhealthz check passed\n")
        status, body = await get(f"{base}/readyz")
        assert status == 500
        assert body == "[-]cache-sync failed: reason withheld\n[-]broken failed: reason withheld\nreadyz check failed\n"
        assert await get(f"{base}/readyz/broken") == (
            500,
            "internal server error: ConnectionError: no route to the database\n",
        )
        assert (await get(f"{base}/readyz/nonexistent"))[0] == 404

        server.faults.clear()  # the informer's retry lists now: readiness follows
        await eventually(lambda: manager.informer(Widget).has_synced)
        assert await get(f"{base}/readyz?exclude=broken") == (200, "ok")
        assert await get(f"{base}/readyz/cache-sync") == (200, "ok")

        healthy = False
        status, body = await get(f"{base}/healthz")
        assert status == 500 and "[+]ping ok\n[-]database failed: reason withheld\n" in body
        assert await get(f"{base}/healthz?exclude=database") == (200, "ok")


async def test_metrics_over_http_have_controller_runtime_and_workqueue_names(server: TestAPIServer) -> None:
    manager = manager_for(server, metrics_bind_address=LOCAL, metrics_secure=False)
    seen = Counting()
    manager.controller_for(Widget).with_options(max_concurrent_reconciles=3).complete(seen)
    async with manager:
        for name in ("a", "b", "c"):
            await manager.client.create(widget(name))
        await eventually(lambda: seen.names() == {"a", "b", "c"})
        assert manager.metrics_server is not None and manager.metrics_server.url.startswith("http://")
        status, text = await get(f"{manager.metrics_server.url}/metrics")
    assert status == 200
    values = samples(text)
    controller = (("controller", "widget"),)
    assert values[("controller_runtime_reconcile_total", (("controller", "widget"), ("result", "success")))] >= 3
    assert values[("controller_runtime_reconcile_total", (("controller", "widget"), ("result", "error")))] == 0
    assert values[("controller_runtime_reconcile_errors_total", controller)] == 0
    assert values[("controller_runtime_terminal_reconcile_errors_total", controller)] == 0
    assert values[("controller_runtime_max_concurrent_reconciles", controller)] == 3
    assert values[("controller_runtime_active_workers", controller)] == 0
    assert values[("controller_runtime_reconcile_time_seconds_count", controller)] >= 3
    assert ("controller_runtime_reconcile_time_seconds_bucket", (("controller", "widget"), ("le", "0.005"))) in values
    queue = (("controller", "widget"), ("name", "widget"))
    assert values[("workqueue_adds_total", queue)] >= 3
    assert values[("workqueue_depth", queue)] == 0
    for name in ("workqueue_queue_duration_seconds_count", "workqueue_work_duration_seconds_count"):
        assert values[(name, queue)] >= 3
    for name in (
        "workqueue_retries_total",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
    ):
        assert (name, queue) in values
    assert values[("process_resident_memory_bytes", ())] > 0


@pytest.fixture
def certificate(tmp_path: Path) -> Path:
    write_self_signed_certificate(tmp_path, ["localhost", "127.0.0.1"])
    return tmp_path


async def test_secure_metrics_need_a_token_allowed_to_get_metrics(server: TestAPIServer, certificate: Path) -> None:
    server.add_user("viewer-token", "viewer")
    manager = manager_for(server, metrics_bind_address=LOCAL, metrics_cert_path=str(certificate))
    async with manager:
        assert manager.metrics_server is not None
        url = f"{manager.metrics_server.url}/metrics"
        assert url.startswith("https://127.0.0.1:")
        trusting = ssl.create_default_context(cafile=str(certificate / "tls.crt"))  # verifies chain and SAN
        assert await get(url, ssl_context=trusting) == (401, "Unauthorized\n")
        assert await get(url, token="not-a-token", ssl_context=trusting) == (401, "Unauthorized\n")
        assert await get(url, token="viewer-token", ssl_context=trusting) == (
            403,
            "Authorization denied for user viewer\n",
        )
        status, text = await get(url, token=server.token, ssl_context=trusting)
        assert status == 200 and "process_cpu_seconds_total" in text
        reviews = server.count_requests(resource="tokenreviews") + server.count_requests(
            resource="subjectaccessreviews"
        )
        assert (await get(url, token=server.token, ssl_context=trusting))[0] == 200
        assert (
            server.count_requests(resource="tokenreviews") + server.count_requests(resource="subjectaccessreviews")
            == reviews
        )  # answers are cached: a scrape every 15 s costs the API server nothing

        # HTTP/2 is not offered: ALPN settles on http/1.1 even when the client prefers h2.
        alpn = ssl.create_default_context(cafile=str(certificate / "tls.crt"))
        alpn.set_alpn_protocols(["h2", "http/1.1"])
        host, port = manager.metrics_server.bound or ("", 0)
        reader, writer = await asyncio.open_connection(host, port, ssl=alpn, server_hostname="localhost")
        assert writer.get_extra_info("ssl_object").selected_alpn_protocol() == "http/1.1"
        writer.close()


async def test_secure_metrics_default_to_a_self_signed_certificate(server: TestAPIServer) -> None:
    manager = manager_for(server, metrics_bind_address=LOCAL)
    async with manager:
        assert manager.metrics_server is not None
        url = f"{manager.metrics_server.url}/metrics"
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await get(url, token=server.token)  # not signed by a CA the system trusts
        status, text = await get(url, token=server.token, ssl_context=False)
        assert status == 200 and "process_cpu_seconds_total" in text
        cert_dir = manager._certificate_dir  # noqa: SLF001 - the temporary folder must go away at shutdown
        assert cert_dir is not None and (cert_dir / "tls.crt").is_file()
    assert not cert_dir.exists()


def test_bind_addresses() -> None:
    assert parse_bind_address("0") is None and parse_bind_address("") is None
    assert parse_bind_address(":8081") == parse_bind_address(":8081")
    parsed = parse_bind_address(":8443")
    assert parsed is not None and parsed.host is None and parsed.port == 8443
    parsed = parse_bind_address("[::1]:9000")
    assert parsed is not None and parsed.host == "::1" and parsed.port == 9000
    for bad in ("8080", "localhost:http", ":99999"):
        with pytest.raises(ValueError):
            parse_bind_address(bad)
