"""Leader election: the Lease protocol on a fake clock (exact timing, no sleeping), then two managers on one
test API server with short real durations (who reconciles, handover, losing the lease)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio
from mgr_helpers import Counting, Widget, eventually, manager_for, widget

from pyop.client import DynamicClient, Transport
from pyop.client.config import ClientConfig
from pyop.leaderelection import LEASES, LeaderElector, LeaseLock
from pyop.manager import LeaderElectionLost
from pyop.testing import TestAPIServer
from pyop.workqueue import FakeClock

LEASE = "widgets.mgr.pyop.dev"


@pytest_asyncio.fixture
async def candidates(server: TestAPIServer) -> AsyncIterator[Callable[..., LeaderElector]]:
    """Make electors on a shared FakeClock, each with its own connection; no jitter (rng 0)."""
    transports: list[Transport] = []
    clock = FakeClock(start=1000.0)

    def make(identity: str, **options: Any) -> LeaderElector:
        transport = Transport(server.client_config())
        transports.append(transport)
        lock = LeaseLock(DynamicClient(transport), "default", LEASE, identity)
        return LeaderElector(lock, clock=options.pop("clock", clock), rng=lambda: 0.0, **options)

    make.clock = clock  # type: ignore[attr-defined]
    yield make
    for transport in transports:
        await transport.close()


async def settle(clock: FakeClock, waiting: int, done: Callable[[], bool] = lambda: False) -> None:
    """Wait until `waiting` electors are asleep on the fake clock (their HTTP round trips are done), or `done`."""
    await eventually(lambda: clock.pending_timers() == waiting or done(), message=f"{clock.pending_timers()} timers")


async def run_until(clock: FakeClock, done: Callable[[], bool], waiting: int, step: float = 0.5) -> float:
    """Step the fake clock until `done()`; returns the fake seconds it took."""
    started = clock.now()
    for _ in range(400):
        if done():
            return clock.now() - started
        clock.step(step)
        await asyncio.sleep(0)
        await settle(clock, waiting, done)
    raise AssertionError("never happened")


async def lease(server: TestAPIServer) -> dict[str, Any]:
    async with Transport(server.client_config()) as transport:
        return await DynamicClient(transport).get(LEASES, LEASE, "default")


async def test_one_leader_and_takeover_only_after_the_lease_expires(candidates, server: TestAPIServer) -> None:  # type: ignore[no-untyped-def]
    clock: FakeClock = candidates.clock
    a, b = candidates("a"), candidates("b")
    await a.acquire()
    assert a.is_leader()
    first = await lease(server)
    assert first["spec"]["holderIdentity"] == "a" and first["spec"]["leaseDurationSeconds"] == 15
    assert first["spec"].get("leaseTransitions", 0) == 0
    renewing = asyncio.create_task(a.keep_leading())
    acquiring = asyncio.create_task(b.acquire())
    await settle(clock, 2)
    assert b.leader == "a" and not b.is_leader()

    # While "a" renews every 2 s, "b" never gets the lease, however long it waits.
    await run_until(clock, lambda: clock.now() >= 1060.0, waiting=2)
    assert not acquiring.done() and a.is_leader()
    renewed = await lease(server)
    assert renewed["spec"]["acquireTime"] == first["spec"]["acquireTime"]
    assert renewed["spec"]["renewTime"] > first["spec"]["renewTime"]

    # "a" stops renewing without releasing: "b" takes over once 15 s passed since it last saw the lease change.
    renewing.cancel()
    await asyncio.gather(renewing, return_exceptions=True)
    await settle(clock, 1)
    handover = await run_until(clock, acquiring.done, waiting=1)
    assert b.is_leader()
    # The lease duration counts from when "b" saw the last renewal, which was made up to one retry period before
    # it looked (and up to one before "a" stopped); "b" then notices expiry at its next retry, and the clock
    # moves in 0.5 s steps here.
    assert 15.0 - 2.0 <= handover <= 15.0 + 2 * 2.0 + 0.5
    taken = await lease(server)
    assert taken["spec"]["holderIdentity"] == "b" and taken["spec"]["leaseTransitions"] == 1


async def test_release_on_shutdown_hands_over_at_the_next_retry(candidates, server: TestAPIServer) -> None:  # type: ignore[no-untyped-def]
    clock: FakeClock = candidates.clock
    a, b = candidates("a"), candidates("b")
    await a.acquire()
    renewing = asyncio.create_task(a.keep_leading())
    acquiring = asyncio.create_task(b.acquire())
    await settle(clock, 2)
    await run_until(clock, lambda: clock.now() >= 1010.0, waiting=2)
    renewing.cancel()
    await asyncio.gather(renewing, return_exceptions=True)
    assert await a.release() is True
    released = await lease(server)
    assert released["spec"].get("holderIdentity", "") == "" and released["spec"]["leaseDurationSeconds"] == 1
    handover = await run_until(clock, acquiring.done, waiting=1)
    assert b.is_leader() and handover <= 2.0  # one retry period, not the 15 s lease duration
    assert await a.release() is True  # not the leader any more: nothing to release


async def test_a_leader_that_cannot_renew_steps_down_after_the_renew_deadline(
    candidates, server: TestAPIServer
) -> None:  # type: ignore[no-untyped-def]
    clock: FakeClock = candidates.clock
    a = candidates("a")
    await a.acquire()
    renewing = asyncio.create_task(a.keep_leading())
    await settle(clock, 1)
    server.faults.respond(500, path_regex="/leases/", times=None)  # the API server fails every lease request
    lost_after = await run_until(clock, renewing.done, waiting=1, step=0.25)
    assert 10.0 <= lost_after <= 10.0 + 2.0  # renew deadline (plus the renewal period it started in)
    assert not renewing.exception()
    server.faults.clear()


async def test_candidates_starting_together_elect_exactly_one(candidates, server: TestAPIServer) -> None:  # type: ignore[no-untyped-def]
    clock: FakeClock = candidates.clock
    electors = [candidates(f"c{index}") for index in range(4)]
    attempts = [asyncio.create_task(elector.acquire()) for elector in electors]
    await eventually(lambda: sum(task.done() for task in attempts) == 1)
    await settle(clock, 3)
    leaders = [elector.identity for elector in electors if elector.is_leader()]
    assert len(leaders) == 1 and (await lease(server))["spec"]["holderIdentity"] == leaders[0]
    clock.step(2.0)  # the losers of the create race read the lease at their next retry
    await asyncio.sleep(0)
    await settle(clock, 3)
    assert {elector.leader for elector in electors} == {leaders[0]}
    assert [elector.is_leader() for elector in electors].count(True) == 1
    for task in attempts:
        task.cancel()
    await asyncio.gather(*attempts, return_exceptions=True)


def test_durations_must_nest(server: TestAPIServer) -> None:
    lock = LeaseLock(DynamicClient(Transport(ClientConfig(server=server.url))), "default", LEASE, "x")
    with pytest.raises(ValueError, match="greater than renew_deadline"):
        LeaderElector(lock, lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError, match="retry_period"):
        LeaderElector(lock, lease_duration=15, renew_deadline=2, retry_period=2)
    with pytest.raises(ValueError, match="identity"):
        LeaseLock(lock.client, "default", LEASE, "")


# Two managers with real time and short durations.

SHORT = {"lease_duration": 1.0, "renew_deadline": 0.5, "retry_period": 0.1}


def elected_manager(server: TestAPIServer, identity: str, reconciler: Counting, **options: Any) -> Any:
    manager = manager_for(
        server,
        leader_election=True,
        leader_election_id=LEASE,
        leader_election_namespace="default",
        leader_election_identity=identity,
        **SHORT,
        **options,
    )
    manager.controller_for(Widget).complete(reconciler)
    return manager


@pytest.mark.parametrize("release", [False, True], ids=["lease-expires", "release-on-cancel"])
async def test_two_managers_exactly_one_reconciles_and_the_other_takes_over(
    server: TestAPIServer, release: bool
) -> None:
    first, second = Counting(), Counting()
    manager_a = elected_manager(server, "a", first, leader_election_release_on_cancel=release)
    manager_b = elected_manager(server, "b", second, leader_election_release_on_cancel=release)
    names = {f"w{index}" for index in range(10)}
    async with manager_a:
        await asyncio.wait_for(manager_a.elected.wait(), 10)
        async with manager_b:
            for name in sorted(names):
                await manager_a.client.create(widget(name))
            await eventually(lambda: first.names() == names)
            assert not manager_b.elected.is_set() and second.requests == []
            assert manager_a.metrics.value("leader_election_master_status", {"name": LEASE}) == 1
            assert manager_b.metrics.value("leader_election_master_status", {"name": LEASE}) is None
            await manager_a.__aexit__(None, None, None)  # the leader shuts down (released or not)
            await asyncio.wait_for(manager_b.elected.wait(), 10)
            await eventually(lambda: second.names() == names)  # the new leader reconciles everything
            await manager_b.client.create(widget("after-handover"))
            await eventually(lambda: "after-handover" in second.names())
            assert "after-handover" not in first.names()
            holder = (await lease(server))["spec"]["holderIdentity"]
            assert holder == "b"


async def test_losing_the_lease_stops_the_controllers(server: TestAPIServer) -> None:
    seen = Counting()
    manager = elected_manager(server, "a", seen)
    with pytest.raises(LeaderElectionLost):
        async with manager:
            await asyncio.wait_for(manager.elected.wait(), 10)
            await manager.client.create(widget("before"))
            await eventually(lambda: "before" in seen.names())
            # Another party takes the lease (an operator replica that judged it expired, or a human).
            current = await lease(server)
            current["spec"].update(holderIdentity="thief", leaseDurationSeconds=3600)
            await manager.client.dynamic.update(LEASES, current)
            await asyncio.wait_for(manager._stop_event.wait(), 10)  # noqa: SLF001 - the manager stops by itself
    assert all(controller.active_workers == 0 for controller in manager.controllers)
    assert manager.metrics.value("leader_election_master_status", {"name": LEASE}) == 0
    assert (await lease(server))["spec"]["holderIdentity"] == "thief"
