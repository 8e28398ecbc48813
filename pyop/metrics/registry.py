"""One manager's metrics registry: what `/metrics` serves.

A fresh `CollectorRegistry` per manager rather than prometheus_client's global one, so that two managers in one
process (leader election tests, embedded operators) keep separate counters, and so that importing pyop never
registers anything globally. Process metrics (`process_cpu_seconds_total`, `process_resident_memory_bytes`,
...) are added as controller-runtime adds Go's process collector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, PlatformCollector, ProcessCollector
from prometheus_client.gc_collector import GCCollector

from pyop.metrics.controller import ControllerMetrics
from pyop.metrics.leader import LeaderElectionMetrics

if TYPE_CHECKING:
    from pyop.workqueue import PrometheusMetricsProvider

__all__ = ["MetricsRegistry"]


class MetricsRegistry:
    """The registry plus the metric makers bound to it."""

    def __init__(self, registry: CollectorRegistry | None = None, *, process_metrics: bool = True) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        if process_metrics:
            ProcessCollector(registry=self.registry)
            PlatformCollector(registry=self.registry)
            GCCollector(registry=self.registry)
        # Imported here: pyop.workqueue's provider uses pyop.metrics.fast, so a module-level import would be a cycle.
        from pyop.workqueue import PrometheusMetricsProvider

        self.workqueue_provider: PrometheusMetricsProvider = PrometheusMetricsProvider(self.registry)
        self.leader_election = LeaderElectionMetrics(self.registry)

    def controller_metrics(self, controller: str, max_concurrent_reconciles: int) -> ControllerMetrics:
        return ControllerMetrics(self.registry, controller, max_concurrent_reconciles)

    def value(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        """The current value of one series (tests, diagnostics); None if it does not exist."""
        return self.registry.get_sample_value(name, labels or {})
