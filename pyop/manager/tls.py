"""The TLS settings every HTTPS endpoint of the manager shares (metrics, webhooks)."""

from __future__ import annotations

import ssl
from pathlib import Path

__all__ = ["server_ssl_context"]


def server_ssl_context(certificate: Path, key: Path) -> ssl.SSLContext:
    """TLS 1.2+ server context whose ALPN offers http/1.1 only: the servers cannot speak h2, and Kubebuilder
    turns HTTP/2 off by default since the HTTP/2 Rapid Reset CVEs."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(certificate, key)
    context.set_alpn_protocols(["http/1.1"])
    return context
