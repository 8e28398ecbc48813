"""The `/metrics` endpoint: Prometheus exposition of the manager's registry, over HTTPS by default.

Kubebuilder's defaults: HTTPS with the certificate in `--metrics-cert-path` (tls.crt, tls.key) or a self-signed
one made at start-up; callers authenticated and authorised through the API server when `metrics_secure` is on
(see `metrics_auth`); plain HTTP when it is off. HTTP/2 is not offered (ALPN advertises http/1.1 only), which is
Kubebuilder's default since the HTTP/2 Rapid Reset CVEs; aiohttp speaks HTTP/1.1 only anyway.
"""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from pyop.manager.metrics_auth import KubernetesAuth
from pyop.manager.tls import server_ssl_context

__all__ = ["metrics_app", "server_ssl_context"]


def metrics_app(registry: CollectorRegistry, auth: KubernetesAuth | None = None) -> web.Application:
    """An application serving `registry` at `/metrics`, behind `auth` when given."""

    async def handle(request: web.Request) -> web.Response:
        # The client library picks the format from Accept (Prometheus text or OpenMetrics) and renders it.
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
        return web.Response(body=encoder(registry), headers={"Content-Type": content_type})

    app = web.Application(middlewares=[auth.middleware] if auth is not None else [])
    app.router.add_get("/metrics", handle)
    return app
