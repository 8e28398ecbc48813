"""Pluggable work-queue metrics, shaped like client-go's ``workqueue.MetricsProvider``.

A provider hands each named queue its metric objects; the queue reports adds, gets, dones and retries to them.
Nothing here depends on Prometheus: :mod:`pyop.workqueue.prometheus` is one provider, and the manager layer
picks it. A queue without a provider (or without a name, as in client-go) gets no metrics object at all, so
its hot path pays one ``is None`` test per operation and nothing more.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from pyop.workqueue.clock import Clock

__all__ = [
    "CounterMetric",
    "GaugeMetric",
    "HistogramMetric",
    "MetricsProvider",
    "QueueMetrics",
    "SettableGaugeMetric",
    "get_provider",
    "new_queue_metrics",
    "set_provider",
]


class GaugeMetric(Protocol):
    """A gauge the queue moves up and down (depth)."""

    def inc(self) -> None: ...

    def dec(self) -> None: ...


class SettableGaugeMetric(Protocol):
    """A gauge the queue overwrites (unfinished work, longest running processor)."""

    def set(self, value: float) -> None: ...


class CounterMetric(Protocol):
    """A monotonically increasing count (adds, retries)."""

    def inc(self) -> None: ...


class HistogramMetric(Protocol):
    """A distribution of observed durations in seconds (queue duration, work duration)."""

    def observe(self, value: float) -> None: ...


class MetricsProvider(Protocol):
    """Makes the metric objects of one queue, identified by its name (client-go's ``MetricsProvider``)."""

    def new_depth_metric(self, name: str) -> GaugeMetric: ...

    def new_adds_metric(self, name: str) -> CounterMetric: ...

    def new_latency_metric(self, name: str) -> HistogramMetric: ...

    def new_work_duration_metric(self, name: str) -> HistogramMetric: ...

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric: ...

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric: ...

    def new_retries_metric(self, name: str) -> CounterMetric: ...


_global_provider: MetricsProvider | None = None


def set_provider(provider: MetricsProvider | None) -> None:
    """Set the provider used by queues created afterwards without an explicit one (client-go ``SetProvider``).

    The manager calls this once at start-up, so that queues made anywhere in an operator are measured.
    ``None`` switches metrics off again for later queues.
    """
    global _global_provider
    _global_provider = provider


def get_provider() -> MetricsProvider | None:
    """The provider set by :func:`set_provider`, if any."""
    return _global_provider


class QueueMetrics:
    """The metric bookkeeping of one queue: when each item was added and when its processing began.

    Mirrors client-go's ``defaultQueueMetrics``: depth counts items that are dirty (added, not yet handed
    out); queue duration runs from the first add to the get; work duration from the get to the done.
    """

    __slots__ = (
        "_clock",
        "_depth",
        "_adds",
        "_latency",
        "_work_duration",
        "_unfinished_work_seconds",
        "_longest_running_processor",
        "_retries",
        "_add_times",
        "_processing_start_times",
    )

    def __init__(self, provider: MetricsProvider, name: str, clock: Clock) -> None:
        self._clock = clock
        self._depth = provider.new_depth_metric(name)
        self._adds = provider.new_adds_metric(name)
        self._latency = provider.new_latency_metric(name)
        self._work_duration = provider.new_work_duration_metric(name)
        self._unfinished_work_seconds = provider.new_unfinished_work_seconds_metric(name)
        self._longest_running_processor = provider.new_longest_running_processor_seconds_metric(name)
        self._retries = provider.new_retries_metric(name)
        self._add_times: dict[Hashable, float] = {}
        self._processing_start_times: dict[Hashable, float] = {}

    def add(self, item: Hashable) -> None:
        self._adds.inc()
        self._depth.inc()
        if item not in self._add_times:
            self._add_times[item] = self._clock.now()

    def get(self, item: Hashable) -> None:
        self._depth.dec()
        now = self._clock.now()
        self._processing_start_times[item] = now
        added_at = self._add_times.pop(item, None)
        if added_at is not None:
            self._latency.observe(now - added_at)

    def done(self, item: Hashable) -> None:
        started_at = self._processing_start_times.pop(item, None)
        if started_at is not None:
            self._work_duration.observe(self._clock.now() - started_at)

    def retry(self) -> None:
        self._retries.inc()

    def update_unfinished_work(self) -> None:
        """Refresh the gauges that show work in progress; called periodically, since no event marks it."""
        now = self._clock.now()
        total = 0.0
        longest = 0.0
        for started_at in self._processing_start_times.values():
            age = now - started_at
            total += age
            if age > longest:
                longest = age
        self._unfinished_work_seconds.set(total)
        self._longest_running_processor.set(longest)


def new_queue_metrics(provider: MetricsProvider | None, name: str, clock: Clock) -> QueueMetrics | None:
    """Metrics for a queue; ``None`` without a provider or for an unnamed queue (as in client-go)."""
    if provider is None or not name:
        return None
    return QueueMetrics(provider, name, clock)
