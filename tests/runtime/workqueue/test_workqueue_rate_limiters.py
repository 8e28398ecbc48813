"""Rate limiter delays for known sequences (client-go util/workqueue/default_rate_limiters.go)."""

from __future__ import annotations

import math

import pytest

from pyop.workqueue import (
    BucketRateLimiter,
    FakeClock,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
)


def test_exponential_doubles_from_base_delay_up_to_the_cap() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    delays = [limiter.when("a") for _ in range(22)]
    expected = [0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24]
    expected += [20.48, 40.96, 81.92, 163.84, 327.68, 655.36, 1000.0, 1000.0, 1000.0, 1000.0]
    assert delays == pytest.approx(expected)
    assert limiter.num_requeues("a") == 22


def test_exponential_tracks_items_separately_and_forget_resets() -> None:
    limiter = ItemExponentialFailureRateLimiter(1.0, 60.0)
    assert [limiter.when("a") for _ in range(3)] == [1.0, 2.0, 4.0]
    assert limiter.when("b") == 1.0
    assert limiter.num_requeues("a") == 3
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 1.0
    assert limiter.num_requeues("b") == 1


def test_exponential_is_overflow_safe() -> None:
    capped = ItemExponentialFailureRateLimiter(0.001, 1000.0)
    uncapped = ItemExponentialFailureRateLimiter(0.001, math.inf)
    for _ in range(5000):
        capped_delay = capped.when("a")
        uncapped_delay = uncapped.when("a")
    assert capped_delay == 1000.0
    assert uncapped_delay == math.inf
    assert capped.num_requeues("a") == 5000


def test_fast_slow_switches_after_max_fast_attempts() -> None:
    limiter = ItemFastSlowRateLimiter(0.005, 10.0, 3)
    assert [limiter.when("a") for _ in range(5)] == [0.005, 0.005, 0.005, 10.0, 10.0]
    assert limiter.num_requeues("a") == 5
    assert limiter.when("b") == 0.005
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.005


def test_max_of_returns_the_longest_delay_of_its_limiters() -> None:
    limiter = MaxOfRateLimiter(
        ItemFastSlowRateLimiter(0.005, 3.0, 3),
        ItemExponentialFailureRateLimiter(0.001, 1.0),
    )
    # fast/slow: .005 .005 .005 3 3; exponential: .001 .002 .004 .008 .016
    assert [limiter.when("a") for _ in range(5)] == pytest.approx([0.005, 0.005, 0.005, 3.0, 3.0])
    assert limiter.num_requeues("a") == 5


def test_max_of_picks_whichever_limiter_is_longer_at_each_step() -> None:
    limiter = MaxOfRateLimiter(
        ItemFastSlowRateLimiter(0.05, 0.06, 2),
        ItemExponentialFailureRateLimiter(0.01, 10.0),
    )
    # fast/slow: .05 .05 .06 .06 .06; exponential: .01 .02 .04 .08 .16
    assert [limiter.when("a") for _ in range(5)] == pytest.approx([0.05, 0.05, 0.06, 0.08, 0.16])


def test_max_of_forget_resets_every_limiter() -> None:
    fast_slow = ItemFastSlowRateLimiter(0.005, 3.0, 1)
    exponential = ItemExponentialFailureRateLimiter(0.001, 1.0)
    limiter = MaxOfRateLimiter(fast_slow, exponential)
    limiter.when("a")
    limiter.when("a")
    limiter.forget("a")
    assert fast_slow.num_requeues("a") == 0
    assert exponential.num_requeues("a") == 0
    assert limiter.when("a") == 0.005


def test_max_of_needs_a_limiter() -> None:
    with pytest.raises(ValueError):
        MaxOfRateLimiter()


def test_with_max_wait_caps_the_delay() -> None:
    inner = ItemExponentialFailureRateLimiter(1.0, 1000.0)
    limiter = WithMaxWaitRateLimiter(inner, 5.0)
    assert [limiter.when("a") for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert limiter.num_requeues("a") == 5
    limiter.forget("a")
    assert inner.num_requeues("a") == 0
    assert limiter.when("a") == 1.0


def test_bucket_allows_a_burst_then_spaces_items_by_qps(clock: FakeClock) -> None:
    limiter = BucketRateLimiter(qps=10, burst=3, clock=clock)
    assert [limiter.when(index) for index in range(6)] == pytest.approx([0, 0, 0, 0.1, 0.2, 0.3])


def test_bucket_refills_over_time_up_to_the_burst(clock: FakeClock) -> None:
    limiter = BucketRateLimiter(qps=10, burst=3, clock=clock)
    for index in range(5):
        limiter.when(index)  # Three tokens spent, two borrowed.
    clock.step(0.25)  # 2.5 tokens come back: 0.5 available.
    assert limiter.when("x") == pytest.approx(0.05)
    clock.step(60)  # Refills, but never beyond the burst.
    assert [limiter.when(index) for index in range(4)] == pytest.approx([0, 0, 0, 0.1])


def test_bucket_keeps_no_per_item_state(clock: FakeClock) -> None:
    limiter = BucketRateLimiter(qps=1, burst=1, clock=clock)
    assert limiter.when("a") == 0
    limiter.forget("a")
    assert limiter.when("a") == pytest.approx(1.0)
    assert limiter.num_requeues("a") == 0


def test_bucket_with_infinite_qps_never_delays(clock: FakeClock) -> None:
    limiter = BucketRateLimiter(qps=math.inf, burst=1, clock=clock)
    assert [limiter.when(index) for index in range(1000)] == [0.0] * 1000


@pytest.mark.parametrize(("qps", "burst"), [(0, 10), (-1, 10), (10, 0)])
def test_bucket_rejects_limits_that_would_block_forever(qps: float, burst: int) -> None:
    with pytest.raises(ValueError):
        BucketRateLimiter(qps=qps, burst=burst)


def test_default_controller_rate_limiter_backs_off_per_item_from_5ms(clock: FakeClock) -> None:
    limiter = default_controller_rate_limiter(clock=clock)
    assert [limiter.when("a") for _ in range(4)] == pytest.approx([0.005, 0.01, 0.02, 0.04])
    assert limiter.num_requeues("a") == 4
    limiter.forget("a")
    assert limiter.when("a") == pytest.approx(0.005)


def test_default_controller_rate_limiter_caps_at_1000_seconds(clock: FakeClock) -> None:
    limiter = default_controller_rate_limiter(clock=clock)
    for _ in range(40):
        delay = limiter.when("a")
        clock.step(100)  # Keep the bucket full so only the per-item backoff shows.
    assert delay == 1000.0


def test_default_controller_rate_limiter_holds_many_items_to_10_qps_after_burst_100(clock: FakeClock) -> None:
    limiter = default_controller_rate_limiter(clock=clock)
    delays = [limiter.when(index) for index in range(102)]
    assert delays[:100] == pytest.approx([0.005] * 100)
    assert delays[100:] == pytest.approx([0.1, 0.2])
