"""Certificates for the tests' clients, the wardle group, and an HTTP helper for the aggregated server."""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from apiserver.wardle import Fischer, Flunder, FlunderStrategy
from pyop.apiserver import AggregatedServer, APIGroupVersion, RecommendedOptions, Resource
from pyop.apiserver.storage.etcd.local import LocalEtcd
from pyop.testing.aggregator.certificates import new_client_certificate
from pyop.webhook.certificates.authority import KeyPair, new_ca

FLUNDERS = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"


def wardle_group() -> APIGroupVersion:
    return APIGroupVersion(
        "wardle.example.com",
        "v1alpha1",
        [Resource(Flunder, strategy=FlunderStrategy()), Resource(Fischer)],
    )


@dataclass(frozen=True)
class ClientCertificate:
    certificate_file: Path
    key_file: Path


@dataclass(frozen=True)
class CertificateAuthority:
    """A CA (files) that signs client certificates."""

    pair: KeyPair
    folder: Path

    @classmethod
    def create(cls, folder: Path, name: str) -> CertificateAuthority:
        folder.mkdir(parents=True, exist_ok=True)
        pair = new_ca(name, datetime.now(UTC), timedelta(days=1))
        (folder / "ca.crt").write_bytes(pair.certificate)
        return cls(pair, folder)

    @property
    def ca_file(self) -> Path:
        return self.folder / "ca.crt"

    def client(self, common_name: str, organizations: tuple[str, ...] = ()) -> ClientCertificate:
        pair = new_client_certificate(self.pair, common_name, datetime.now(UTC), timedelta(hours=1), organizations)
        certificate_file = self.folder / f"{common_name}.crt"
        key_file = self.folder / f"{common_name}.key"
        certificate_file.write_bytes(pair.certificate)
        key_file.write_bytes(pair.key)
        return ClientCertificate(certificate_file, key_file)


def client_context(server: AggregatedServer, certificate: ClientCertificate | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(server.ca_file))
    if certificate is not None:
        context.load_cert_chain(certificate.certificate_file, certificate.key_file)
    return context


async def call(
    server: AggregatedServer,
    method: str,
    path: str,
    *,
    token: str | None = None,
    certificate: ClientCertificate | None = None,
    headers: dict[str, str] | list[tuple[str, str]] | None = None,
    body: Any = None,
) -> tuple[int, Any]:
    """One request straight to the aggregated server: (status, decoded JSON or text)."""
    sent: list[tuple[str, str]] = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
    if token:
        sent.append(("Authorization", f"Bearer {token}"))
    async with (
        aiohttp.ClientSession() as session,
        session.request(
            method, server.url + path, json=body, headers=sent, ssl=client_context(server, certificate)
        ) as response,
    ):
        if response.content_type == "application/json":
            return response.status, await response.json()
        return response.status, await response.text()


@dataclass
class KubectlResult:
    returncode: int
    stdout: str
    stderr: str


async def kubectl(binary: str, kubeconfig: Path, home: Path, *args: str, stdin: str | None = None) -> KubectlResult:
    """The real kubectl with its own HOME and discovery cache; awaited, as the servers run in this event loop."""
    import asyncio
    import os

    process = await asyncio.create_subprocess_exec(
        binary,
        *args,
        "--cache-dir",
        str(home / "cache"),
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(kubeconfig)},
    )
    out, err = await asyncio.wait_for(process.communicate(stdin.encode() if stdin is not None else None), 60)
    return KubectlResult(process.returncode or 0, out.decode(), err.decode())


_prefixes = iter(range(1_000_000))


def use_backend(options: RecommendedOptions, backend: str, request: pytest.FixtureRequest, folder: Path) -> None:
    """Point ``options`` at a fresh store of the backend: a file of its own, or an etcd prefix of its own."""
    options.storage.backend = backend
    if backend == "file":
        options.storage.path = str(folder / "objects.jsonl")
    elif backend == "etcd3":
        etcd: LocalEtcd = request.getfixturevalue("etcd")
        options.storage.etcd_servers = [etcd.url]
        options.storage.etcd_prefix = f"/registry/wardle-{os.getpid()}-{next(_prefixes)}"
