"""The request-header and client CA bundles follow their source while the server runs (kube's dynamic CA content):
a rotated --requestheader-client-ca-file, and a changed kube-system/extension-apiserver-authentication ConfigMap,
are used from the next requests on, without a restart; a bundle that does not parse keeps the one in use."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from apiserver.helpers import FLUNDERS, CertificateAuthority, call
from apiserver.test_authentication import PROXY_HEADERS, forbidden_user
from pyop.apiserver import AggregatedServer, APIGroupVersion, RecommendedOptions
from pyop.client import Client, Transport
from pyop.testing import TestAPIServer


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("the condition did not hold in time")
        await asyncio.sleep(0.05)


def user_of(server: AggregatedServer, authority: CertificateAuthority) -> Callable[[str], Awaitable[bool]]:
    """Whether a front-proxy certificate of ``authority`` is taken as the headers' user ("alice") or refused (401)."""

    async def check(expected: str) -> bool:
        certificate = authority.client("front-proxy-client")
        status, body = await call(server, "GET", FLUNDERS, certificate=certificate, headers=PROXY_HEADERS)
        if expected == "401":
            return status == 401
        return status == 403 and forbidden_user(body) == expected

    return check


async def test_a_rotated_request_header_ca_file_is_used_without_a_restart(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions, front_proxy: CertificateAuthority,
    tmp_path: Path,
) -> None:  # fmt: skip
    options.authentication.ca_reload_interval = 0.05
    new = CertificateAuthority.create(tmp_path / "new-front-proxy", "new-front-proxy")
    ca_file = Path(options.authentication.requestheader_client_ca_file)
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        old_user, new_user = user_of(server, front_proxy), user_of(server, new)
        assert await old_user("alice") and await new_user("401")
        ca_file.write_bytes(front_proxy.pair.certificate + new.pair.certificate)  # both, while clients change
        await eventually(lambda: new_user("alice"))
        assert await old_user("alice")
        ca_file.write_bytes(b"not a bundle")  # half written, say: the bundle in use stays
        await asyncio.sleep(0.3)
        assert await new_user("alice") and await old_user("alice")
        ca_file.write_bytes(new.pair.certificate)  # the old CA retired
        await eventually(lambda: old_user("401"))
        assert await new_user("alice")


async def test_a_changed_authentication_config_map_is_used_without_a_restart(
    core: TestAPIServer, group: APIGroupVersion, tmp_path: Path
) -> None:
    options = RecommendedOptions()  # the request-header settings from the cluster's ConfigMap
    options.authentication.ca_reload_interval = 0.05
    ours = CertificateAuthority.create(tmp_path / "ours", "ours")
    async with (
        AggregatedServer.for_testing([group], core, options=options, register=False) as server,
        Client(Transport(core.client_config())) as client,
    ):
        check = user_of(server, ours)
        assert await check("401")  # the ConfigMap names the test server's front-proxy CA, not ours
        config_maps = await client.dynamic.resource("v1", "ConfigMap")
        config_map = await client.dynamic.get(config_maps, "extension-apiserver-authentication", "kube-system")
        config_map["data"]["requestheader-client-ca-file"] += ours.pair.certificate.decode()
        await client.dynamic.update(config_maps, config_map, "kube-system")
        await eventually(lambda: check("alice"))
        config_map = await client.dynamic.get(config_maps, "extension-apiserver-authentication", "kube-system")
        config_map["data"]["requestheader-allowed-names"] = '["someone-else"]'
        await client.dynamic.update(config_maps, config_map, "kube-system")
        await eventually(lambda: check("401"))  # the allowed names follow the ConfigMap too
