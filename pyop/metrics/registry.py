"""One manager's metrics registry: what `/metrics` serves.

A fresh `CollectorRegistry` per manager rather than prometheus_client's global one, so that two managers in one
process (leader election tests, embedded operators) keep separate counters, and so that importing pyop never
registers anything globally. Process metrics (`process_cpu_seconds_total`, `process_resident_memory_bytes`,
...) are added as controller-runtime adds Go's process collector.

The `CollectorRegistry` is made when first asked for (`registry`: the metrics server, a webhook server, `value`):
the series pyop updates are `pyop.metrics.fast`'s, which count without it, so a manager that serves no metrics
never imports prometheus_client (~20 ms of an operator's start-up). Made later, the registry holds the same
series with the same values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyop.metrics.controller import ControllerMetrics
from pyop.metrics.fast import FastFamilies
from pyop.metrics.leader import LeaderElectionMetrics

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from pyop.workqueue import PrometheusMetricsProvider

__all__ = ["MetricsRegistry"]


class MetricsRegistry:
    """The registry plus the metric makers bound to it."""

    def __init__(self, registry: CollectorRegistry | None = None, *, process_metrics: bool = True) -> None:
        self._registry: CollectorRegistry | None = None
        self._process_metrics = process_metrics
        self._fast = FastFamilies(make_registry=lambda: self.registry)
        if registry is not None:
            self._attach(registry)
        # Imported here: pyop.workqueue's provider uses pyop.metrics.fast, so a module-level import would be a cycle.
        from pyop.workqueue import PrometheusMetricsProvider

        self.workqueue_provider: PrometheusMetricsProvider = PrometheusMetricsProvider(self._fast)
        self.leader_election = LeaderElectionMetrics(self._fast)

    @property
    def registry(self) -> CollectorRegistry:
        """The prometheus_client registry (given, or made now with the process collectors on first use)."""
        if self._registry is None:
            from prometheus_client import CollectorRegistry

            self._attach(CollectorRegistry(auto_describe=True))
        assert self._registry is not None
        return self._registry

    def _attach(self, registry: CollectorRegistry) -> None:
        from prometheus_client import PlatformCollector, ProcessCollector
        from prometheus_client.gc_collector import GCCollector

        self._registry = registry
        if self._process_metrics:
            ProcessCollector(registry=registry)
            PlatformCollector(registry=registry)
            GCCollector(registry=registry)
        self._fast.attach(registry)

    def controller_metrics(self, controller: str, max_concurrent_reconciles: int) -> ControllerMetrics:
        return ControllerMetrics(self._fast, controller, max_concurrent_reconciles)

    def value(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        """The current value of one series (tests, diagnostics); None if it does not exist."""
        return self.registry.get_sample_value(name, labels or {})
