"""The webhook server: HTTPS on `webhook_port` (9443), one POST endpoint per registered path.

controller-runtime's `webhook.Server`: TLS 1.2+, HTTP/1.1 only (ALPN never offers h2), the certificate pair
read from a folder (`/tmp/k8s-webhook-server/serving-certs` unless told otherwise, where Kubebuilder's
manager patch mounts cert-manager's Secret) and reloaded when the files change (`CertWatcher`). Paths can be
registered until the server starts; dispatch goes through a table rather than aiohttp's router, so an unknown
path is a plain 404 and a path taken twice is refused at registration.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyop.manager.certwatcher import CertWatcher
from pyop.manager.listen import HEADER_TIMEOUT, IDLE_TIMEOUT, BindAddress, HTTPServer
from pyop.webhook.admission import AdmissionHandler, answer_review
from pyop.webhook.conversion import ConversionWebhook, MalformedReview
from pyop.webhook.metrics import WebhookMetrics

if TYPE_CHECKING:
    from aiohttp import web
    from prometheus_client import CollectorRegistry

__all__ = ["CONVERSION_PATH", "DEFAULT_CERT_DIR", "Endpoint", "WebhookServer"]

log = logging.getLogger("pyop.webhook")

DEFAULT_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"  # controller-runtime's default, mounted there by config/
CONVERSION_PATH = "/convert"
# controller-runtime's limit: an AdmissionReview carries an object and its old version, each up to etcd's 1.5 MiB.
MAX_REQUEST_BYTES = 7 * 1024 * 1024

Endpoint = Callable[[bytes, str], Awaitable[tuple[int, dict[str, Any] | None]]]
"""(request body, content type) -> (HTTP status, JSON body or none)."""


class WebhookServer:
    """Serves admission and conversion endpoints over HTTPS."""

    def __init__(
        self,
        *,
        host: str = "",
        port: int = 9443,
        cert_dir: str = "",
        cert_name: str = "tls.crt",
        key_name: str = "tls.key",
        cert_watch_interval: float = 10.0,
        registry: CollectorRegistry | None = None,
        header_timeout: float = HEADER_TIMEOUT,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        """`registry`: where the `controller_runtime_webhook_*` series go (the manager's; none: not measured).
        `header_timeout`/`idle_timeout`: slow and idle clients are cut off (`pyop.manager.listen`)."""
        self.address = BindAddress(host or None, port)
        folder = Path(cert_dir or DEFAULT_CERT_DIR)
        self.certificate = folder / cert_name
        self.key = folder / key_name
        self.cert_watch_interval = cert_watch_interval
        self.endpoints: dict[str, Endpoint] = {}
        self.cert_watcher: CertWatcher | None = None
        self.http: HTTPServer | None = None
        self._conversion: ConversionWebhook | None = None
        self.metrics = WebhookMetrics(registry) if registry is not None else None
        self.header_timeout = header_timeout
        self.idle_timeout = idle_timeout

    # registration

    def register(self, path: str, endpoint: Endpoint) -> None:
        if not path.startswith("/"):
            raise ValueError(f"webhook path {path!r} must start with '/'")
        if path in self.endpoints:
            raise ValueError(f"webhook path {path!r} is already registered")
        if self.http is not None:
            raise RuntimeError("register webhooks before the server starts")
        self.endpoints[path] = endpoint

    def register_admission(self, path: str, handler: AdmissionHandler) -> None:
        """Serve an AdmissionReview handler (defaulting or validation) at `path`."""

        async def endpoint(body: bytes, content_type: str) -> tuple[int, dict[str, Any] | None]:
            return 200, await answer_review(handler, body, content_type)

        self.register(path, endpoint)

    @property
    def conversion(self) -> ConversionWebhook:
        """The `/convert` endpoint's kinds, registered on first use."""
        if self._conversion is None:
            conversion = ConversionWebhook()

            async def endpoint(body: bytes, content_type: str) -> tuple[int, dict[str, Any] | None]:
                try:
                    return 200, await conversion.answer(body)
                except MalformedReview as error:
                    log.error("bad conversion request", extra={"error": str(error)})
                    return 400, None

            self.register(CONVERSION_PATH, endpoint)
            self._conversion = conversion
        return self._conversion

    # lifecycle

    @property
    def started(self) -> bool:
        """True once the server listens (the manager's `webhook` readiness check)."""
        return self.http is not None and self.http.bound is not None

    @property
    def url(self) -> str:
        if self.http is None:
            raise RuntimeError("webhook server not started")
        return self.http.url

    async def start(self) -> tuple[str, int]:
        """Load the certificate and listen; returns the address bound. Raises OSError (missing certificate files
        included) or ssl.SSLError (a pair that does not load), as a Go manager fails to start then."""
        from aiohttp import web

        from pyop.manager.tls import server_ssl_context

        if self.http is not None:
            raise RuntimeError("webhook server already started")
        context = server_ssl_context(self.certificate, self.key)
        self.cert_watcher = CertWatcher(context, self.certificate, self.key, interval=self.cert_watch_interval)
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_route("*", "/{path:.*}", self._dispatch)
        server = HTTPServer(
            app,
            self.address,
            ssl_context=context,
            header_timeout=self.header_timeout,
            idle_timeout=self.idle_timeout,
        )
        bound = await server.start()
        self.http = server
        return bound

    async def stop(self) -> None:
        if self.http is not None:
            await self.http.stop()
            self.http = None

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        endpoint = self.endpoints.get(request.path)
        if endpoint is None:
            return web.Response(status=404, text=f"no webhook at {request.path}\n")
        if request.method != "POST":
            return web.Response(status=405, text="webhooks take POST requests\n", headers={"Allow": "POST"})
        if self.metrics is None:
            return await self._serve(endpoint, request)
        response: web.StreamResponse | None = None

        async def serve() -> int:
            nonlocal response
            response = await self._serve(endpoint, request)
            return response.status

        await self.metrics.measure(request.path, serve)
        assert response is not None
        return response

    async def _serve(self, endpoint: Endpoint, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return web.Response(status=413, text=f"request bodies are limited to {MAX_REQUEST_BYTES} bytes\n")
        status, answer = await endpoint(body, request.content_type)
        if answer is None:
            return web.Response(status=status)
        return web.Response(status=status, body=json.dumps(answer).encode(), content_type="application/json")
