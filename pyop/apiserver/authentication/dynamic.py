"""Client CA bundles that follow their source while the server runs (k8s.io/apiserver's dynamic CA content).

kube-apiserver rotates its front-proxy CA by publishing a bundle with the old and the new CA in
``kube-system/extension-apiserver-authentication``, then the new one only; an aggregated server that read it once
would refuse kube-aggregator as soon as its client certificate comes from the new CA. So, as
``DynamicFileCAContent`` and the request-header ConfigMap controller do:

- ``--requestheader-client-ca-file`` and ``--client-ca-file`` are read again every ``interval`` seconds, and a
  changed bundle is used from the next request on;
- the settings taken from the ConfigMap (the request-header CA, allowed names and header names; the client CA) are
  read again likewise and replace the ones in use when they changed.

A source that cannot be read or parsed meanwhile keeps the bundle in use (logged), as kube keeps its last good
content. The TLS layer needs no reload: it lets any certificate through (`pyop.apiserver.server.tls`), and the
authenticators verify against the bundles they hold at the time of each request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyop.apiserver.authentication.delegating import (
    ClientCertificateAuthenticator,
    DelegatingAuthenticator,
    RequestHeaderAuthenticator,
    RequestHeaderConfig,
)
from pyop.apiserver.authentication.x509 import CertificateBundle

if TYPE_CHECKING:
    from pyop.apiserver.server.cluster import ClusterClient

log = logging.getLogger("pyop.apiserver.authentication")


class FileBundle:
    """A CA file read again each ``check``; ``apply`` gets the new bundle when its bytes changed and parse."""

    def __init__(self, path: str | Path, apply: Callable[[CertificateBundle], None], current: bytes) -> None:
        self.path = Path(path)
        self.apply = apply
        self.current = current
        self.reloads = 0

    def check(self) -> bool:
        try:
            pem = self.path.read_bytes()
        except OSError as error:
            log.warning("cannot read %s (still using the CA bundle read before): %s", self.path, error)
            return False
        if pem == self.current:
            return False
        try:
            bundle = CertificateBundle(pem, str(self.path))
        except ValueError as error:
            log.warning("%s (still using the CA bundle read before)", error)
            return False
        self.current = pem
        self.apply(bundle)
        self.reloads += 1
        log.info("loaded the changed CA bundle %s", self.path)
        return True


class ConfigMapSettings:
    """The settings an authenticator took from ``extension-apiserver-authentication``, read again each ``check``."""

    def __init__(
        self, cluster: ClusterClient, authenticator: DelegatingAuthenticator, *, request_header: bool, client_ca: bool
    ) -> None:
        self.cluster = cluster
        self.authenticator = authenticator
        self.request_header = request_header  # whether the request-header settings come from it (no flag gave them)
        self.client_ca = client_ca
        self.reloads = 0

    async def check(self) -> bool:
        from pyop.apiserver.server.cluster import client_ca_from_config_map, request_header_from_config_map

        try:
            data = await self.cluster.authentication_config_map()
            header = request_header_from_config_map(data) if data is not None and self.request_header else None
            client = client_ca_from_config_map(data) if data is not None and self.client_ca else None
        except Exception as error:  # noqa: BLE001 - unreachable or malformed: keep what is in use, retry
            log.warning("cannot read kube-system/extension-apiserver-authentication again: %s", error)
            return False
        changed = False
        if self.request_header and not _same_header(header, self.authenticator.request_header):
            self.authenticator.request_header = RequestHeaderAuthenticator(header) if header is not None else None
            changed = True
        if self.client_ca and not _same_bundle(client, self.authenticator.client_certificate):
            self.authenticator.client_certificate = (
                ClientCertificateAuthenticator(client) if client is not None else None
            )
            changed = True
        if changed:
            self.reloads += 1
            log.info("loaded the changed settings of kube-system/extension-apiserver-authentication")
        return changed


def _same_header(config: RequestHeaderConfig | None, current: RequestHeaderAuthenticator | None) -> bool:
    if config is None or current is None:
        return config is None and current is None
    old = current.config
    return (config.client_ca.pem, config.allowed_names, config.username_headers, config.group_headers) == (
        old.client_ca.pem,
        old.allowed_names,
        old.username_headers,
        old.group_headers,
    ) and (config.extra_headers_prefix, config.uid_headers) == (old.extra_headers_prefix, old.uid_headers)


def _same_bundle(bundle: CertificateBundle | None, current: ClientCertificateAuthenticator | None) -> bool:
    if bundle is None or current is None:
        return bundle is None and current is None
    return bundle.pem == current.client_ca.pem


def reloading(
    checks: list[Callable[[], bool | Awaitable[bool]]], interval: float
) -> Callable[[], Coroutine[Any, Any, None]]:
    """One background loop running every check each ``interval`` seconds (errors logged, never fatal)."""

    async def run() -> None:
        while True:
            await asyncio.sleep(interval)
            for check in checks:
                try:
                    result = check()
                    if isinstance(result, Awaitable):
                        await result
                except Exception:
                    log.exception("reloading the client CA bundles failed; retrying")

    return run


__all__ = ["ConfigMapSettings", "FileBundle", "reloading"]
