"""Work-queue metrics with client-go's names, through prometheus-client, timed by a fake clock."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from pyop.workqueue import (
    DelayingQueue,
    FakeClock,
    ItemExponentialFailureRateLimiter,
    PrometheusMetricsProvider,
    RateLimitingQueue,
    WorkQueue,
    set_provider,
)

LABELS = {"name": "widgets", "controller": "widgets"}


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def provider(registry: CollectorRegistry) -> PrometheusMetricsProvider:
    return PrometheusMetricsProvider(registry)


def sample(registry: CollectorRegistry, name: str, labels: dict[str, str] = LABELS) -> float | None:
    return registry.get_sample_value(name, labels)


async def test_depth_and_adds_follow_adds_and_gets(
    clock: FakeClock, registry: CollectorRegistry, provider: PrometheusMetricsProvider
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="widgets", clock=clock, metrics_provider=provider)
    queue.add("a")
    queue.add("b")
    queue.add("a")  # Deduplicated: neither an add nor depth.
    assert sample(registry, "workqueue_adds_total") == 2
    assert sample(registry, "workqueue_depth") == 2
    await queue.get()
    assert sample(registry, "workqueue_depth") == 1


async def test_item_readded_while_processing_counts_in_depth_until_handed_out_again(
    clock: FakeClock, registry: CollectorRegistry, provider: PrometheusMetricsProvider
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="widgets", clock=clock, metrics_provider=provider)
    queue.add("a")
    await queue.get()
    queue.add("a")
    queue.add("a")
    assert sample(registry, "workqueue_adds_total") == 2
    assert sample(registry, "workqueue_depth") == 1
    queue.done("a")
    assert sample(registry, "workqueue_depth") == 1
    await queue.get()
    assert sample(registry, "workqueue_depth") == 0


async def test_queue_and_work_durations_are_observed_in_seconds(
    clock: FakeClock, registry: CollectorRegistry, provider: PrometheusMetricsProvider
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="widgets", clock=clock, metrics_provider=provider)
    queue.add("a")
    clock.step(2)
    queue.add("a")  # The wait is measured from the first add.
    clock.step(1)
    await queue.get()
    clock.step(4)
    queue.done("a")
    assert sample(registry, "workqueue_queue_duration_seconds_count") == 1
    assert sample(registry, "workqueue_queue_duration_seconds_sum") == pytest.approx(3.0)
    assert sample(registry, "workqueue_work_duration_seconds_count") == 1
    assert sample(registry, "workqueue_work_duration_seconds_sum") == pytest.approx(4.0)
    assert sample(registry, "workqueue_work_duration_seconds_bucket", {**LABELS, "le": "1.0"}) == 0
    assert sample(registry, "workqueue_work_duration_seconds_bucket", {**LABELS, "le": "10.0"}) == 1


async def test_histograms_use_controller_runtime_buckets(
    clock: FakeClock, registry: CollectorRegistry, provider: PrometheusMetricsProvider
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="widgets", clock=clock, metrics_provider=provider)
    queue.add("a")
    await queue.get()
    exposition = generate_latest(registry).decode()
    for bound in ["1e-08", "1e-07", "0.001", "1000.0", "+Inf"]:
        assert f'workqueue_queue_duration_seconds_bucket{{controller="widgets",le="{bound}",name="widgets"}}' in (
            exposition
        )


async def test_retries_count_add_after_and_add_rate_limited(
    clock: FakeClock, registry: CollectorRegistry, provider: PrometheusMetricsProvider
) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(1, 10), name="widgets", clock=clock, metrics_provider=provider
    )
    queue.add_after("a", 5)
    queue.add_after("b", 0)
    queue.add_rate_limited("c")
    queue.add("d")  # A plain add is not a retry.
    assert sample(registry, "workqueue_retries_total") == 3


async def test_unfinished_work_gauges_are_refreshed_every_half_second(
    clock: FakeClock, registry: CollectorRegistry, provider: PrometheusMetricsProvider
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="widgets", clock=clock, metrics_provider=provider)
    queue.add("a")
    queue.add("b")
    await queue.get()
    clock.step(0.5)
    assert sample(registry, "workqueue_unfinished_work_seconds") == pytest.approx(0.5)
    assert sample(registry, "workqueue_longest_running_processor_seconds") == pytest.approx(0.5)
    await queue.get()
    clock.step(0.5)
    assert sample(registry, "workqueue_unfinished_work_seconds") == pytest.approx(1.5)
    assert sample(registry, "workqueue_longest_running_processor_seconds") == pytest.approx(1.0)
    clock.step(0.2)  # Between refreshes the gauges keep their last value.
    assert sample(registry, "workqueue_unfinished_work_seconds") == pytest.approx(1.5)
    queue.done("a")
    queue.done("b")
    clock.step(0.3)
    assert sample(registry, "workqueue_unfinished_work_seconds") == 0
    assert sample(registry, "workqueue_longest_running_processor_seconds") == 0


async def test_unfinished_work_refresh_stops_on_shutdown(clock: FakeClock, provider: PrometheusMetricsProvider) -> None:
    queue: WorkQueue[str] = WorkQueue(name="widgets", clock=clock, metrics_provider=provider)
    queue.add("a")
    await queue.get()
    assert clock.has_waiters()
    queue.shut_down()
    assert not clock.has_waiters()


async def test_queue_without_provider_arms_no_refresh_and_records_nothing(
    clock: FakeClock, registry: CollectorRegistry, provider: PrometheusMetricsProvider
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="widgets", clock=clock)
    queue.add("a")
    await queue.get()
    queue.done("a")
    assert not clock.has_waiters()
    assert sample(registry, "workqueue_adds_total") is None


async def test_unnamed_queue_records_nothing_even_with_a_provider(
    clock: FakeClock, registry: CollectorRegistry, provider: PrometheusMetricsProvider
) -> None:
    queue: WorkQueue[str] = WorkQueue(clock=clock, metrics_provider=provider)
    queue.add("a")
    await queue.get()
    assert not clock.has_waiters()
    assert "workqueue_adds_total{" not in generate_latest(registry).decode()


async def test_global_provider_applies_to_queues_created_afterwards(
    clock: FakeClock, registry: CollectorRegistry, provider: PrometheusMetricsProvider
) -> None:
    before: WorkQueue[str] = WorkQueue(name="before", clock=clock)
    set_provider(provider)
    after: DelayingQueue[str] = DelayingQueue(name="widgets", clock=clock)
    before.add("a")
    after.add("a")
    assert sample(registry, "workqueue_adds_total") == 1
    assert sample(registry, "workqueue_adds_total", {"name": "before", "controller": "before"}) is None


async def test_queues_are_labelled_separately_and_providers_share_a_registry(
    clock: FakeClock, registry: CollectorRegistry
) -> None:
    first: WorkQueue[str] = WorkQueue(name="one", clock=clock, metrics_provider=PrometheusMetricsProvider(registry))
    second: WorkQueue[str] = WorkQueue(name="two", clock=clock, metrics_provider=PrometheusMetricsProvider(registry))
    first.add("a")
    second.add("a")
    second.add("b")
    assert sample(registry, "workqueue_adds_total", {"name": "one", "controller": "one"}) == 1
    assert sample(registry, "workqueue_adds_total", {"name": "two", "controller": "two"}) == 2


def test_exposition_uses_client_go_metric_names(registry: CollectorRegistry) -> None:
    provider = PrometheusMetricsProvider(registry)
    queue: WorkQueue[str] = WorkQueue(name="widgets", metrics_provider=provider)
    queue.add("a")
    names = {metric.name for metric in registry.collect()}
    # prometheus-client strips the _total suffix from counter family names; the series keep it.
    assert names == {
        "workqueue_depth",
        "workqueue_adds",
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "workqueue_retries",
    }
    assert 'workqueue_adds_total{controller="widgets",name="widgets"} 1.0' in generate_latest(registry).decode()


def test_default_provider_registers_in_the_global_registry() -> None:
    from prometheus_client import REGISTRY

    provider = PrometheusMetricsProvider()
    assert provider.registry is REGISTRY
    assert PrometheusMetricsProvider().registry is REGISTRY  # A second provider does not re-register.
