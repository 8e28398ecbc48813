"""The Prometheus metrics provider: client-go's work-queue metrics, registered as controller-runtime does.

Metric names, help texts, histogram buckets and labels follow controller-runtime's
``pkg/metrics/workqueue.go``, so existing dashboards and alerts for Go operators work on pyop operators: every
series carries ``name`` (the queue name) and ``controller`` (the same value, as controller-runtime sets it).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyop.metrics.fast import Family, FastCounter, FastFamilies, FastGauge, FastHistogram, families_for
from pyop.workqueue.metrics import CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["LABEL_NAMES", "PrometheusMetricsProvider", "WORKQUEUE_DURATION_BUCKETS"]

LABEL_NAMES = ("name", "controller")

# prometheus.ExponentialBuckets(10e-9, 10, 12): 10 ns up to 1000 s.
WORKQUEUE_DURATION_BUCKETS = tuple(10.0**exponent for exponent in range(-8, 4))


@dataclass(frozen=True)
class _Families:
    depth: Family[FastGauge]
    adds: Family[FastCounter]
    latency: Family[FastHistogram]
    work_duration: Family[FastHistogram]
    unfinished_work: Family[FastGauge]
    longest_running_processor: Family[FastGauge]
    retries: Family[FastCounter]


# One set of families per registry: registering a name twice in a registry is an error, yet several providers
# (one per manager, or per test) may share the global registry.
_families_by_registry: weakref.WeakKeyDictionary[FastFamilies, _Families] = weakref.WeakKeyDictionary()


def _families_for(registry: CollectorRegistry | FastFamilies) -> _Families:
    """The families, as pyop.metrics.fast's series: a queue updates several per item, from its event loop."""
    fast = families_for(registry)
    families = _families_by_registry.get(fast)
    if families is None:
        families = _Families(
            depth=fast.gauge("workqueue_depth", "Current depth of workqueue", LABEL_NAMES),
            adds=fast.counter("workqueue_adds_total", "Total number of adds handled by workqueue", LABEL_NAMES),
            latency=fast.histogram(
                "workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested",
                LABEL_NAMES,
                WORKQUEUE_DURATION_BUCKETS,
            ),
            work_duration=fast.histogram(
                "workqueue_work_duration_seconds",
                "How long in seconds processing an item from workqueue takes.",
                LABEL_NAMES,
                WORKQUEUE_DURATION_BUCKETS,
            ),
            unfinished_work=fast.gauge(
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress and hasn't been observed "
                "by work_duration. Large values indicate stuck threads. One can deduce the number of "
                "stuck threads by observing the rate at which this increases.",
                LABEL_NAMES,
            ),
            longest_running_processor=fast.gauge(
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running.",
                LABEL_NAMES,
            ),
            retries=fast.counter(
                "workqueue_retries_total", "Total number of retries handled by workqueue", LABEL_NAMES
            ),
        )
        _families_by_registry[fast] = families
    return families


class PrometheusMetricsProvider:
    """Work-queue metrics in a ``prometheus_client`` registry (the global ``REGISTRY`` unless given one).

    Given `pyop.metrics.fast` families not yet attached to a registry (a manager's, before anything asks for its
    registry), the series count at once and `registry` is theirs once made.
    """

    def __init__(self, registry: CollectorRegistry | FastFamilies | None = None) -> None:
        if registry is None:
            from prometheus_client import REGISTRY

            registry = REGISTRY
        self._target = registry
        self._families = _families_for(registry)

    @property
    def registry(self) -> CollectorRegistry:
        target = self._target
        return target.registry if isinstance(target, FastFamilies) else target

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
