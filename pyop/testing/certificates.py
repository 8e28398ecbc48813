"""Certificates for tests of TLS servers: rotate a mounted pair as the kubelet does, and read what a server serves.

Operators reload their metrics and webhook certificates when cert-manager renews them (`pyop.manager.certwatcher`);
a test of that needs the files to change the way they do in a pod, and to see which certificate a new connection
gets.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Sequence
from pathlib import Path

from pyop.manager.certificates import write_self_signed_certificate

__all__ = ["rotate_certificate", "served_certificate"]


def rotate_certificate(folder: Path, hosts: Sequence[str] = ("127.0.0.1", "localhost")) -> bytes:
    """Write a new self-signed pair into `folder` the kubelet's way; returns the certificate's DER bytes.

    As for a Secret volume: the files live in a new `..gen-N` folder, the `..data` link is swapped to it
    atomically, and `tls.crt`/`tls.key` are links through `..data`.
    """
    generation = len(list(folder.glob("..gen-*")))
    target = folder / f"..gen-{generation}"
    certificate, _ = write_self_signed_certificate(target, list(hosts))
    staging = folder / "..data_tmp"
    staging.symlink_to(target.name)
    os.replace(staging, folder / "..data")
    for name in ("tls.crt", "tls.key"):
        if not (folder / name).is_symlink():
            (folder / name).symlink_to(f"..data/{name}")
    return ssl.PEM_cert_to_DER_cert(certificate.read_text())


async def served_certificate(host: str, port: int) -> bytes:
    """The DER bytes of the certificate a new TLS connection to `host:port` is given (not verified)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    _, writer = await asyncio.open_connection(host, port, ssl=context)
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()
    if der is None:
        raise ssl.SSLError(f"{host}:{port} presented no certificate")
    return bytes(der)
