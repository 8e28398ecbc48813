"""pyop.metrics.fast's series expose exactly what prometheus_client's Counter, Gauge and Histogram expose for the
same updates (names, labels, help, type, cumulative buckets, count, sum, _created), so dashboards cannot tell."""

from __future__ import annotations

import re

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from pyop.metrics.fast import families_for

BUCKETS = (0.005, 0.01, 0.5, 1.0, 10)


def _without_created_values(text: str) -> str:
    return re.sub(r"(_created\{[^}]*\}) \S+", r"\1 T", text)


def test_the_exposition_is_prometheus_clients_for_the_same_updates() -> None:
    reference, fast = CollectorRegistry(), CollectorRegistry()
    counter = Counter("demo_total", "Counted things", ("controller", "result"), registry=reference)
    gauge = Gauge("demo_active", "Active things", ("controller",), registry=reference)
    histogram = Histogram("demo_seconds", "Time taken", ("controller",), buckets=BUCKETS, registry=reference)
    families = families_for(fast)
    fast_counter = families.counter("demo_total", "Counted things", ("controller", "result"))
    fast_gauge = families.gauge("demo_active", "Active things", ("controller",))
    fast_histogram = families.histogram("demo_seconds", "Time taken", ("controller",), BUCKETS)
    for made in (counter, fast_counter):
        made.labels("a", "success").inc()
        made.labels("a", "success").inc(2)
        made.labels("a", "error")
    for made_gauge in (gauge, fast_gauge):
        made_gauge.labels("a").inc()
        made_gauge.labels("a").inc()
        made_gauge.labels("a").dec()
        made_gauge.labels("b").set(7)
    for made_histogram in (histogram, fast_histogram):
        for value in (0.001, 0.005, 0.0051, 0.7, 1.0, 42.0):
            made_histogram.labels("a").observe(value)
    assert _without_created_values(generate_latest(fast).decode()) == _without_created_values(
        generate_latest(reference).decode()
    )
    assert fast.get_sample_value("demo_seconds_bucket", {"controller": "a", "le": "0.005"}) == 2
    assert fast.get_sample_value("demo_seconds_count", {"controller": "a"}) == 6


def test_a_name_registers_once_and_counters_only_go_up() -> None:
    families = families_for(CollectorRegistry())
    counter = families.counter("demo_total", "Counted things", ("controller",))
    with pytest.raises(ValueError, match="already registered"):
        families.gauge("demo_total", "Again", ("controller",))
    with pytest.raises(ValueError, match="non-negative"):
        counter.labels("a").inc(-1)
    with pytest.raises(ValueError, match="label values"):
        counter.labels("a", "b")
