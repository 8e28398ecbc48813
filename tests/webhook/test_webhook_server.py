"""The webhook server inside the manager: started only when webhooks are registered and on every replica,
ready once it listens, TLS with HTTP/1.1 only, certificates reloaded when their files change, and the builder's
paths and refusals."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from webhook_helpers import (
    Gadget,
    GadgetDefaulter,
    GadgetValidator,
    admission_review,
    client_ssl_context,
    gadget,
    post,
    webhook_manager,
)

from pyop.api import GroupVersion, Resource
from pyop.testing import TestAPIServer
from pyop.testing.certificates import rotate_certificate, served_certificate
from pyop.webhook import defaulting_path, validation_path

VALIDATE = "/validate-hooks-pyop-dev-v1-gadget"


async def test_readiness_is_false_until_the_server_listens_and_true_while_it_does(
    server: TestAPIServer, cert_dir: Path
) -> None:
    manager = webhook_manager(server, cert_dir)
    manager.webhook_for(Gadget).with_validator(GadgetValidator()).complete()
    ready, lines = await manager.probes.run("readyz")
    assert not ready and "[-]webhook failed: reason withheld" in lines
    async with manager:
        ready, lines = await manager.probes.run("readyz")
        assert ready and "[+]webhook ok" in lines
    ready, _ = await manager.probes.run("readyz")
    assert not ready  # stopped: no longer listening


async def test_without_webhooks_there_is_no_server_and_no_readiness_check(
    server: TestAPIServer, cert_dir: Path
) -> None:
    manager = webhook_manager(server, cert_dir)
    async with manager:
        assert manager.webhook_server is None
        ready, lines = await manager.probes.run("readyz")
        assert ready and not any("webhook" in line for line in lines)


async def test_a_replica_that_does_not_lead_serves_webhooks_too(server: TestAPIServer, cert_dir: Path) -> None:
    election = {"leader_election": True, "leader_election_id": "hooks", "leader_election_namespace": "default"}
    leader = webhook_manager(server, cert_dir, leader_election_identity="a", **election)
    follower = webhook_manager(server, cert_dir, leader_election_identity="b", **election)
    for manager in (leader, follower):
        manager.webhook_for(Gadget).with_validator(GadgetValidator()).complete()
    async with leader:
        await asyncio.wait_for(leader.elected.wait(), 10)
        async with follower:
            assert not follower.elected.is_set()
            status, answer = await post(follower, VALIDATE, admission_review("CREATE", gadget()), cert_dir)
            assert status == 200 and answer["response"]["allowed"] is True


async def test_http2_is_not_offered(server: TestAPIServer, cert_dir: Path) -> None:
    manager = webhook_manager(server, cert_dir)
    manager.webhook_for(Gadget).with_validator(GadgetValidator()).complete()
    async with manager:
        assert manager.webhook_server is not None and manager.webhook_server.http is not None
        host, port = manager.webhook_server.http.bound or ("", 0)
        context = client_ssl_context(cert_dir)
        context.set_alpn_protocols(["h2", "http/1.1"])
        _, writer = await asyncio.open_connection(host, port, ssl=context)
        try:
            tls = writer.get_extra_info("ssl_object")
            assert tls.selected_alpn_protocol() == "http/1.1"
            assert tls.version() in ("TLSv1.2", "TLSv1.3")
        finally:
            writer.close()


async def test_a_renewed_certificate_is_served_to_new_connections(server: TestAPIServer, tmp_path: Path) -> None:
    folder = tmp_path / "mounted"
    folder.mkdir()
    first = rotate_certificate(folder)
    manager = webhook_manager(server, folder, webhook_cert_watch_interval=0.05)
    manager.webhook_for(Gadget).with_validator(GadgetValidator()).complete()
    async with manager:
        webhook_server = manager.webhook_server
        assert webhook_server is not None and webhook_server.http is not None
        assert webhook_server.cert_watcher is not None
        host, port = webhook_server.http.bound or ("", 0)
        assert await served_certificate(host, port) == first
        second = rotate_certificate(folder)
        async with asyncio.timeout(10):
            while webhook_server.cert_watcher.reloads == 0:
                await asyncio.sleep(0.02)
        assert await served_certificate(host, port) == second != first
        status, _ = await post(manager, VALIDATE, admission_review("CREATE", gadget()), folder)  # trusts the new one
        assert status == 200


async def test_a_missing_certificate_stops_the_manager_from_starting(server: TestAPIServer, tmp_path: Path) -> None:
    manager = webhook_manager(server, tmp_path / "empty")
    manager.webhook_for(Gadget).with_validator(GadgetValidator()).complete()
    with pytest.raises(FileNotFoundError):
        async with manager:
            pass


class Pod(Resource, group_version=GroupVersion("", "v1")):
    """A kind of the core group."""


class CronJob(Resource, group_version=GroupVersion("batch.tutorial.kubebuilder.io", "v2beta1")):
    """Kubebuilder's tutorial kind."""


def test_default_paths_are_kubebuilders() -> None:
    assert defaulting_path(Gadget) == "/mutate-hooks-pyop-dev-v1-gadget"
    assert validation_path(Gadget) == VALIDATE
    assert defaulting_path(Pod) == "/mutate--v1-pod"
    assert validation_path(CronJob) == "/validate-batch-tutorial-kubebuilder-io-v2beta1-cronjob"


async def test_custom_paths_and_the_builders_refusals(server: TestAPIServer, cert_dir: Path) -> None:
    manager = webhook_manager(server, cert_dir)
    with pytest.raises(ValueError, match="needs with_defaulter, with_validator or with_conversion"):
        manager.webhook_for(Gadget).complete()
    with pytest.raises(TypeError, match="validate_delete"):
        manager.webhook_for(Gadget).with_validator(GadgetDefaulter())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must start with '/'"):
        manager.webhook_for(Gadget).with_defaulting_path("mutate")
    manager.webhook_for(Gadget).with_defaulter(GadgetDefaulter()).with_defaulting_path("/default-gadget").complete()
    with pytest.raises(ValueError, match="already registered"):
        manager.webhook_for(Gadget).with_defaulter(GadgetDefaulter()).with_defaulting_path("/default-gadget").complete()
    async with manager:
        assert manager.webhook_server is not None
        assert sorted(manager.webhook_server.endpoints) == ["/default-gadget"]
        status, answer = await post(manager, "/default-gadget", admission_review("CREATE", gadget()), cert_dir)
        assert status == 200 and answer["response"]["patchType"] == "JSONPatch"
        with pytest.raises(RuntimeError, match="register webhooks before"):
            manager.webhook_for(Gadget).with_validator(GadgetValidator()).complete()
