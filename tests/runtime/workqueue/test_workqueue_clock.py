"""FakeClock and RealClock: the time sources the queues are driven by."""

from __future__ import annotations

import asyncio

import pytest

from pyop.workqueue import FakeClock, RealClock


def test_fake_clock_fires_due_timers_in_time_order_on_step() -> None:
    clock = FakeClock()
    fired: list[str] = []
    clock.call_at(3, lambda: fired.append("c"))
    clock.call_at(1, lambda: fired.append("a"))
    clock.call_at(2, lambda: fired.append("b"))
    clock.call_at(2, lambda: fired.append("b2"))
    clock.step(1.5)
    assert fired == ["a"]
    clock.step(1.5)
    assert fired == ["a", "b", "b2", "c"]
    assert clock.now() == 3


def test_fake_clock_does_not_fire_cancelled_timers() -> None:
    clock = FakeClock()
    fired: list[str] = []
    timer = clock.call_at(1, lambda: fired.append("a"))
    timer.cancel()
    assert not clock.has_waiters()
    clock.step(2)
    assert fired == []


def test_fake_clock_fires_timers_armed_by_callbacks_when_already_due() -> None:
    clock = FakeClock()
    fired: list[float] = []

    def rearm() -> None:
        fired.append(clock.now())
        clock.call_at(clock.now() + 10, rearm)

    clock.call_at(1, rearm)
    clock.step(5)
    assert fired == [5]
    assert clock.next_timer_at() == 15


def test_fake_clock_timer_at_or_before_now_fires_on_next_step() -> None:
    clock = FakeClock(start=10)
    fired: list[str] = []
    clock.call_at(5, lambda: fired.append("late"))
    clock.step(0)
    assert fired == ["late"]


def test_fake_clock_never_goes_back() -> None:
    clock = FakeClock(start=10)
    with pytest.raises(ValueError):
        clock.set_time(9)
    with pytest.raises(ValueError):
        clock.step(-1)


async def test_real_clock_calls_back_when_the_moment_comes() -> None:
    clock = RealClock()
    fired = asyncio.get_running_loop().create_future()
    start = clock.now()
    clock.call_at(start + 0.01, lambda: fired.set_result(clock.now()))
    fired_at = await asyncio.wait_for(fired, timeout=5)
    assert fired_at - start >= 0.009  # Never early (allowing for float rounding of the loop clock).


async def test_real_clock_cancelled_timer_does_not_fire() -> None:
    clock = RealClock()
    fired: list[bool] = []
    timer = clock.call_at(clock.now(), lambda: fired.append(True))
    timer.cancel()
    await asyncio.sleep(0.02)
    assert fired == []
