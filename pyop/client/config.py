"""Where the API server is and how to authenticate to it: the one object the transport needs.

`ClientConfig` is plain data so tests and callers can build one by hand (`ClientConfig(server=url, token=t)`);
`pyop.client.kubeconfig.load_config` fills it from kubeconfig files or the in-cluster service account.
Credentials that change over time (exec plugins with an expiry, rotated service-account tokens) come through
an `AuthProvider`, asked before each request and told to refresh after a 401.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@runtime_checkable
class AuthProvider(Protocol):
    """Supplies the `Authorization` header value; may change it over time."""

    async def authorization(self) -> str | None:
        """The header value to send now (`Bearer <token>`); None sends no header (client certificates)."""
        ...

    async def refresh(self) -> bool:
        """The server said 401: get new credentials. Returns whether a retry could succeed."""
        ...


@dataclass
class StaticToken:
    """A bearer token that never changes (kubeconfig `token`, tests)."""

    token: str

    async def authorization(self) -> str | None:
        return f"Bearer {self.token}"

    async def refresh(self) -> bool:
        return False


@dataclass
class ClientConfig:
    """Connection settings for one API server and one identity."""

    server: str
    token: str | None = None
    auth: AuthProvider | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify_ssl: bool = True
    tls_server_name: str | None = None
    proxy: str | None = None
    namespace: str = "default"
    context: str | None = None
    user_agent: str = "pyop"
    extra_headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.server = self.server.rstrip("/")
        if self.auth is None and self.token:
            self.auth = StaticToken(self.token)

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS settings for an `https` server (None for plain HTTP): the system's trust store unless a CA
        file is given, a client certificate when one is, no verification at all only when asked."""
        if not self.server.startswith("https"):
            return None
        context = ssl.create_default_context(cafile=self.ca_file)
        if not self.verify_ssl:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context
