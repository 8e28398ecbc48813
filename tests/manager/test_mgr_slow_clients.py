"""Slow and idle clients are cut off by the probe, metrics and webhook servers (controller-runtime's
ReadHeaderTimeout and IdleTimeout), with short timeouts here: a half-sent request head is closed within the
header timeout, a complete request is answered, a kept-alive connection is closed once idle too long."""

from __future__ import annotations

import asyncio
import ssl
import time
from pathlib import Path

import pytest
from mgr_helpers import manager_for

from pyop.manager import Manager
from pyop.manager.certificates import write_self_signed_certificate
from pyop.manager.listen import HEADER_TIMEOUT, IDLE_TIMEOUT, BindAddress, HTTPServer
from pyop.manager.probes import HealthProbes
from pyop.testing import TestAPIServer
from pyop.webhook.server import WebhookServer

LOCAL = "127.0.0.1:0"
HEADER = 0.4
IDLE = 1.2


async def closed_after(host: str, port: int, sent: bytes, *, tls: ssl.SSLContext | None = None) -> float:
    """Seconds until the server closes a connection after `sent` was written (a bound of 10 s fails the test)."""
    reader, writer = await asyncio.open_connection(host, port, ssl=tls)
    started = time.monotonic()
    writer.write(sent)
    await writer.drain()
    try:
        async with asyncio.timeout(10):
            while await reader.read(65536):
                pass
    finally:
        writer.close()
    return time.monotonic() - started


async def answered_then_closed_when_idle(host: str, port: int) -> tuple[bytes, float]:
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    answered = time.monotonic()
    try:
        async with asyncio.timeout(10):
            while await reader.read(65536):
                pass
    finally:
        writer.close()
    return head, time.monotonic() - answered


def test_the_defaults_are_controller_runtimes() -> None:
    assert (HEADER_TIMEOUT, IDLE_TIMEOUT) == (32.0, 90.0)
    server = HTTPServer(HealthProbes().app(), BindAddress("127.0.0.1", 0))
    assert (server.header_timeout, server.idle_timeout) == (32.0, 90.0)
    with pytest.raises(ValueError, match="must be positive"):
        HTTPServer(HealthProbes().app(), BindAddress("127.0.0.1", 0), header_timeout=0)


@pytest.mark.parametrize(
    "sent",
    [b"", b"GET /healthz HTTP/1.1\r\nHost: x\r\n", b"GET /heal"],
    ids=["nothing", "head-without-end", "half-request-line"],
)
async def test_a_probe_server_closes_a_half_sent_request_within_the_header_timeout(sent: bytes) -> None:
    probes = HealthProbes()
    server = HTTPServer(probes.app(), BindAddress("127.0.0.1", 0), header_timeout=HEADER, idle_timeout=30.0)
    host, port = await server.start()
    try:
        waited = await closed_after(host, port, sent)
    finally:
        await server.stop()
    assert HEADER * 0.8 <= waited < HEADER + 1.0


async def test_a_kept_alive_connection_is_answered_then_closed_when_idle() -> None:
    server = HTTPServer(HealthProbes().app(), BindAddress("127.0.0.1", 0), header_timeout=HEADER, idle_timeout=IDLE)
    host, port = await server.start()
    try:
        head, idle = await answered_then_closed_when_idle(host, port)
    finally:
        await server.stop()
    assert head.startswith(b"HTTP/1.1 200")
    assert IDLE * 0.8 <= idle < IDLE + 1.5  # the idle timeout, not the (shorter) header timeout, applies


async def test_a_second_request_half_sent_on_a_kept_alive_connection_is_closed_within_the_header_timeout() -> None:
    server = HTTPServer(HealthProbes().app(), BindAddress("127.0.0.1", 0), header_timeout=HEADER, idle_timeout=30.0)
    host, port = await server.start()
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        await reader.readexactly(2)  # "ok"
        await asyncio.sleep(HEADER * 1.5)  # idle longer than the header timeout: still open (idle timeout is 30 s)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
        await reader.readexactly(2)
        started = time.monotonic()
        writer.write(b"GET /healthz HTTP/1.1\r\nHo")
        async with asyncio.timeout(10):
            assert await reader.read() == b""
        waited = time.monotonic() - started
        writer.close()
    finally:
        await server.stop()
    assert head.startswith(b"HTTP/1.1 200")
    assert HEADER * 0.8 <= waited < HEADER + 1.0


async def test_many_half_sent_requests_are_all_closed() -> None:
    server = HTTPServer(HealthProbes().app(), BindAddress("127.0.0.1", 0), header_timeout=HEADER, idle_timeout=30.0)
    host, port = await server.start()
    try:
        waits = await asyncio.gather(*(closed_after(host, port, b"POST /x HTTP/1.1\r\n") for _ in range(100)))
    finally:
        await server.stop()
    assert max(waits) < HEADER + 2.0


async def test_the_managers_probe_and_metrics_servers_use_the_configured_timeouts(server: TestAPIServer) -> None:
    manager: Manager = manager_for(
        server,
        health_probe_bind_address=LOCAL,
        metrics_bind_address=LOCAL,
        metrics_secure=False,
        http_header_timeout=HEADER,
        http_idle_timeout=IDLE,
    )
    async with manager:
        assert manager.probe_server is not None and manager.metrics_server is not None
        for http in (manager.probe_server, manager.metrics_server):
            assert http.bound is not None
            waited = await closed_after(*http.bound, b"GET /metrics HTTP/1.1\r\n")
            assert HEADER * 0.8 <= waited < HEADER + 1.0


async def test_the_webhook_server_closes_a_half_sent_request_over_tls(tmp_path: Path) -> None:
    write_self_signed_certificate(tmp_path, ["127.0.0.1"])
    webhooks = WebhookServer(host="127.0.0.1", port=0, cert_dir=str(tmp_path), header_timeout=HEADER, idle_timeout=30.0)

    async def endpoint(body: bytes, content_type: str) -> tuple[int, dict[str, object] | None]:
        return 200, {"ok": True}

    webhooks.register("/validate", endpoint)
    host, port = await webhooks.start()
    trust = ssl.create_default_context(cafile=str(tmp_path / "tls.crt"))
    try:
        waited = await closed_after(host, port, b"POST /validate HTTP/1.1\r\nHost: x\r\n", tls=trust)
        reader, writer = await asyncio.open_connection(host, port, ssl=trust)
        writer.write(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
        writer.close()
    finally:
        await webhooks.stop()
    assert HEADER * 0.8 <= waited < HEADER + 1.0
