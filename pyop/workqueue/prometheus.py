"""The Prometheus metrics provider: client-go's work-queue metrics, registered as controller-runtime does.

Metric names, help texts, histogram buckets and labels follow controller-runtime's
``pkg/metrics/workqueue.go``, so existing dashboards and alerts for Go operators work on pyop operators: every
series carries ``name`` (the queue name) and ``controller`` (the same value, as controller-runtime sets it).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from pyop.workqueue.metrics import CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric

__all__ = ["LABEL_NAMES", "PrometheusMetricsProvider", "WORKQUEUE_DURATION_BUCKETS"]

LABEL_NAMES = ("name", "controller")

# prometheus.ExponentialBuckets(10e-9, 10, 12): 10 ns up to 1000 s.
WORKQUEUE_DURATION_BUCKETS = tuple(10.0**exponent for exponent in range(-8, 4))


@dataclass(frozen=True)
class _Families:
    depth: Gauge
    adds: Counter
    latency: Histogram
    work_duration: Histogram
    unfinished_work: Gauge
    longest_running_processor: Gauge
    retries: Counter


# One set of families per registry: registering a name twice in a registry is an error, yet several providers
# (one per manager, or per test) may share the global registry.
_families_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, _Families] = weakref.WeakKeyDictionary()


def _families_for(registry: CollectorRegistry) -> _Families:
    families = _families_by_registry.get(registry)
    if families is None:
        families = _Families(
            depth=Gauge(
                "workqueue_depth",
                "Current depth of workqueue",
                LABEL_NAMES,
                registry=registry,
            ),
            adds=Counter(
                "workqueue_adds_total",
                "Total number of adds handled by workqueue",
                LABEL_NAMES,
                registry=registry,
            ),
            latency=Histogram(
                "workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested",
                LABEL_NAMES,
                buckets=WORKQUEUE_DURATION_BUCKETS,
                registry=registry,
            ),
            work_duration=Histogram(
                "workqueue_work_duration_seconds",
                "How long in seconds processing an item from workqueue takes.",
                LABEL_NAMES,
                buckets=WORKQUEUE_DURATION_BUCKETS,
                registry=registry,
            ),
            unfinished_work=Gauge(
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress and hasn't been observed "
                "by work_duration. Large values indicate stuck threads. One can deduce the number of "
                "stuck threads by observing the rate at which this increases.",
                LABEL_NAMES,
                registry=registry,
            ),
            longest_running_processor=Gauge(
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running.",
                LABEL_NAMES,
                registry=registry,
            ),
            retries=Counter(
                "workqueue_retries_total",
                "Total number of retries handled by workqueue",
                LABEL_NAMES,
                registry=registry,
            ),
        )
        _families_by_registry[registry] = families
    return families


class PrometheusMetricsProvider:
    """Work-queue metrics in a ``prometheus_client`` registry (the global ``REGISTRY`` unless given one)."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self.registry = registry
        self._families = _families_for(registry)

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return self._families.depth.labels(name, name)

    def new_adds_metric(self, name: str) -> CounterMetric:
        return self._families.adds.labels(name, name)

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return self._families.latency.labels(name, name)

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return self._families.work_duration.labels(name, name)

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._families.unfinished_work.labels(name, name)

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self._families.longest_running_processor.labels(name, name)

    def new_retries_metric(self, name: str) -> CounterMetric:
        return self._families.retries.labels(name, name)
