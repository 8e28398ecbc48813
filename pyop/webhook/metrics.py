"""The webhook server's metrics, named and labelled as controller-runtime's `webhook/internal/metrics`.

`controller_runtime_webhook_requests_total{webhook, code}` (code: the HTTP status answered),
`controller_runtime_webhook_requests_in_flight{webhook}` and `controller_runtime_webhook_latency_seconds{webhook}`,
where `webhook` is the path, so the dashboards written for Go operators work unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["WebhookMetrics"]


class WebhookMetrics:
    """The three series in one registry (the manager's)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.latency = Histogram(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            ("webhook",),
            registry=registry,
        )
        self.requests = Counter(
            "controller_runtime_webhook_requests",  # exposed with the _total suffix
            "Total number of admission requests by HTTP status code.",
            ("webhook", "code"),
            registry=registry,
        )
        self.in_flight = Gauge(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served.",
            ("webhook",),
            registry=registry,
        )

    async def measure(self, path: str, serve: Callable[[], Awaitable[int]]) -> int:
        """Run `serve` (which returns the HTTP status it answered) and record it under `path`."""
        in_flight = self.in_flight.labels(path)
        in_flight.inc()
        started = time.perf_counter()
        status = 500
        try:
            status = await serve()
            return status
        finally:
            self.latency.labels(path).observe(time.perf_counter() - started)
            self.requests.labels(path, str(status)).inc()
            in_flight.dec()
