"""Counters, gauges and histograms for the reconcile hot path, exported as prometheus_client's are.

Why: a reconcile updates a dozen series (the controller's result, active workers and reconcile time, the work
queue's adds, depth, latency and work duration). prometheus_client takes a `threading.Lock` and runs a few
Python checks per update, and scans its buckets one by one per observation: together about a twentieth of an
operator's CPU per reconcile. An operator updates them from its event loop's thread only, so these are plain
attributes (an update is one addition; an observation one `bisect`), read by a `Collector` when `/metrics` is
scraped. The exposition is prometheus_client's own, sample for sample: `_total` and `_created` for counters,
cumulative `_bucket`, `_count`, `_sum` and `_created` for histograms (`_created` as prometheus_client's
`disable_created_metrics()` decides).

prometheus_client itself is imported only when a registry exports the families (a scrape) or one is attached:
importing it costs an operator ~20 ms of start-up (its exposition module brings http.server, wsgiref and email),
and an operator serving no `/metrics` never needs it. `FastFamilies()` without a registry collects series at
once and is attached to a `CollectorRegistry` later (`attach`), as `pyop.metrics.MetricsRegistry` does.

Updates from other threads are not supported (they would race like any unlocked `+=`); use prometheus_client's
metrics for those.
"""

from __future__ import annotations

import time
import weakref
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import Metric

__all__ = ["Family", "FastCounter", "FastFamilies", "FastGauge", "FastHistogram", "families_for"]


class FastCounter:
    """One counter series."""

    __slots__ = ("value", "created")

    def __init__(self) -> None:
        self.value = 0.0
        self.created = time.time()

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("counters can only be incremented by non-negative amounts")
        self.value += amount


class FastGauge:
    """One gauge series."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount

    def dec(self, amount: float = 1.0) -> None:
        self.value -= amount

    def set(self, value: float) -> None:
        self.value = float(value)


class FastHistogram:
    """One histogram series: a count per bucket (not cumulative until exported) and the sum."""

    __slots__ = ("bounds", "counts", "sum", "created")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds  # ascending, the last one +Inf
        self.counts = [0] * len(bounds)
        self.sum = 0.0
        self.created = time.time()

    def observe(self, amount: float) -> None:
        self.counts[bisect_left(self.bounds, amount)] += 1  # the first bucket whose `le` bound holds amount
        self.sum += amount


Child = TypeVar("Child", FastCounter, FastGauge, FastHistogram)


class Family(Generic[Child]):
    """One metric family: its series by label values."""

    def __init__(
        self, kind: str, name: str, documentation: str, labelnames: Sequence[str], buckets: Sequence[float] = ()
    ) -> None:
        self.kind: str = kind
        self.name: str = name
        self.documentation: str = documentation
        self.labelnames: tuple[str, ...] = tuple(labelnames)
        given: tuple[float, ...] = tuple(float(bound) for bound in buckets)
        self.bounds: tuple[float, ...] = given if not given or given[-1] == float("inf") else (*given, float("inf"))
        self.children: dict[tuple[str, ...], Child] = {}

    def labels(self, *values: str) -> Child:
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name}: expected {len(self.labelnames)} label values, got {len(values)}")
        key = tuple(str(value) for value in values)
        child = self.children.get(key)
        if child is None:
            made: Any = (
                FastCounter()
                if self.kind == "counter"
                else FastGauge()
                if self.kind == "gauge"
                else FastHistogram(self.bounds)
            )
            child = self.children[key] = made
        return child

    def export(self) -> Metric:
        import prometheus_client.metrics
        from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
        from prometheus_client.samples import Sample
        from prometheus_client.utils import floatToGoString

        created = prometheus_client.metrics._use_created
        if self.kind == "counter":
            counters = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
            for key, child in self.children.items():
                assert isinstance(child, FastCounter)
                counters.add_metric(key, child.value, created=child.created if created else None)
            return counters
        if self.kind == "gauge":
            gauges = GaugeMetricFamily(self.name, self.documentation, labels=self.labelnames)
            for key, child in self.children.items():
                assert isinstance(child, FastGauge)
                gauges.add_metric(key, child.value)
            return gauges
        histograms = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for key, child in self.children.items():
            assert isinstance(child, FastHistogram)
            total = 0
            buckets: list[tuple[str, float]] = []
            for bound, count in zip(child.bounds, child.counts, strict=True):
                total += count
                buckets.append((floatToGoString(bound), float(total)))
            histograms.add_metric(key, buckets, child.sum)
            if created:
                labels = dict(zip(self.labelnames, key, strict=True))
                histograms.samples.append(Sample(self.name + "_created", labels, child.created, None, None))
        return histograms


class FastFamilies:
    """The fast metric families of one registry, and the collector that exports them.

    Made without a registry, the families count at once and are exported once `attach`ed to one; `registry`
    then makes it through `make_registry` when first asked for (which must attach it).
    """

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        make_registry: Callable[[], CollectorRegistry] | None = None,
    ) -> None:
        self._families: list[Family[Any]] = []
        self._registry: CollectorRegistry | None = None
        self._make_registry = make_registry
        if registry is not None:
            self.attach(registry)

    def attach(self, registry: CollectorRegistry) -> None:
        """Export these families from `registry` (once; `families_for(registry)` then answers these)."""
        if self._registry is not None:
            raise ValueError("these metric families are already attached to a registry")
        registry.register(self)
        self._registry = registry
        _by_registry[registry] = self

    @property
    def registry(self) -> CollectorRegistry:
        """The registry these families are exported from (made now by `make_registry` if not yet attached)."""
        if self._registry is None and self._make_registry is not None:
            self._make_registry()
        if self._registry is None:
            raise RuntimeError("these metric families are attached to no registry")
        return self._registry

    def counter(self, name: str, documentation: str, labelnames: Sequence[str]) -> Family[FastCounter]:
        return self._add(Family[FastCounter]("counter", name, documentation, labelnames))

    def gauge(self, name: str, documentation: str, labelnames: Sequence[str]) -> Family[FastGauge]:
        return self._add(Family[FastGauge]("gauge", name, documentation, labelnames))

    def histogram(
        self, name: str, documentation: str, labelnames: Sequence[str], buckets: Sequence[float]
    ) -> Family[FastHistogram]:
        return self._add(Family[FastHistogram]("histogram", name, documentation, labelnames, buckets))

    def _add(self, family: Family[Child]) -> Family[Child]:
        if any(existing.name == family.name for existing in self._families):
            raise ValueError(f"metric {family.name!r} is already registered")
        self._families.append(family)
        return family

    def collect(self) -> Iterator[Metric]:
        for family in self._families:
            yield family.export()

    def describe(self) -> list[Metric]:
        return []  # families are added after registration; names are checked here instead (`_add`)


_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, FastFamilies] = weakref.WeakKeyDictionary()


def families_for(registry: CollectorRegistry | FastFamilies) -> FastFamilies:
    """The registry's fast families (made and registered on first use); given fast families, those."""
    if isinstance(registry, FastFamilies):
        return registry
    families = _by_registry.get(registry)
    if families is None:
        families = FastFamilies(registry)
    return families
