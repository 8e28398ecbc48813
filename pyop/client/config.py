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


def check_header_value(value: str, what: str) -> str:
    """Refuse a header name or value that would end its header line early: a CR or LF in a token would let it
    add headers of its own (or a second request). The value itself stays out of the message (it may be a
    credential)."""
    if "\r" in value or "\n" in value or "\0" in value:
        raise ValueError(f"{what} contains a line break or NUL character (not allowed in an HTTP header)")
    return value


@dataclass
class ClientConfig:
    """Connection settings for one API server and one identity.

    The `max_*` limits bound what one response may make the client hold (a broken or hostile server, or a
    proxy, could otherwise fill memory); exceeding one fails the request with `ResponseLimitError`. The
    defaults are far above what an API server sends: 1 GiB per response body, 10 MiB of response headers
    (Go's transport default) in at most 1,000 header lines, 64 MiB per watch event line (etcd stores objects
    of at most ~1.5 MiB by default).
    """

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
    max_response_bytes: int = 1 << 30
    max_header_bytes: int = 10 << 20
    max_header_count: int = 1000
    max_watch_line_bytes: int = 64 << 20

    def __post_init__(self) -> None:
        self.server = self.server.rstrip("/")
        if self.token:
            check_header_value(self.token, "the bearer token")
        check_header_value(self.user_agent, "the user agent")
        for name, value in self.extra_headers.items():
            check_header_value(name, f"the header name {name!r}"[:80])
            check_header_value(value, f"the value of header {name!r}")
        for limit in ("max_response_bytes", "max_header_bytes", "max_header_count", "max_watch_line_bytes"):
            if getattr(self, limit) <= 0:
                raise ValueError(f"{limit} must be a positive number, not {getattr(self, limit)!r}")
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
