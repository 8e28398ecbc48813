"""The metrics certificate follows its files: renewed in place (as cert-manager and the kubelet do), the new one
is served to new connections; a pair that does not load leaves the old one in service."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mgr_helpers import manager_for

from pyop.manager.certwatcher import CertWatcher
from pyop.manager.metrics_server import server_ssl_context
from pyop.testing import TestAPIServer
from pyop.testing.certificates import rotate_certificate, served_certificate

LOCAL = "127.0.0.1:0"


def test_a_changed_pair_is_loaded_once_and_a_broken_one_is_not(tmp_path: Path) -> None:
    rotate_certificate(tmp_path)
    context = server_ssl_context(tmp_path / "tls.crt", tmp_path / "tls.key")
    watcher = CertWatcher(context, tmp_path / "tls.crt", tmp_path / "tls.key")
    assert watcher.check() is False  # nothing changed since the server loaded it

    rotate_certificate(tmp_path)
    assert watcher.check() is True and watcher.reloads == 1
    assert watcher.check() is False  # loaded once

    key = tmp_path / "..gen-1" / "tls.key"
    key.write_bytes(b"-----BEGIN PRIVATE KEY-----\nhalf written")
    assert watcher.check() is False and watcher.reloads == 1  # the previous pair stays in service
    (tmp_path / "tls.crt").unlink()
    assert watcher.check() is False  # files missing for a moment: nothing to do yet


async def test_the_metrics_server_serves_a_renewed_certificate_to_new_connections(
    server: TestAPIServer, tmp_path: Path
) -> None:
    first = rotate_certificate(tmp_path)
    manager = manager_for(
        server, metrics_bind_address=LOCAL, metrics_cert_path=str(tmp_path), metrics_cert_watch_interval=0.05
    )
    async with manager:
        assert manager.metrics_server is not None and manager.metrics_cert_watcher is not None
        host, port = manager.metrics_server.bound or ("", 0)
        assert await served_certificate(host, port) == first
        second = rotate_certificate(tmp_path)
        async with asyncio.timeout(10):
            while manager.metrics_cert_watcher.reloads == 0:
                await asyncio.sleep(0.02)
        assert await served_certificate(host, port) == second != first


async def test_a_self_signed_certificate_is_not_watched(server: TestAPIServer) -> None:
    manager = manager_for(server, metrics_bind_address=LOCAL)
    async with manager:
        assert manager.metrics_server is not None
        assert manager.metrics_cert_watcher is None
