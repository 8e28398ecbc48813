"""Lease-based leader election with client-go's algorithm and timing (`tools/leaderelection`).

Candidates race to write their identity into one Lease. The holder renews it every `retry_period`; others
retry every `retry_period` (with jitter) and may take the lease over only once it has gone unrenewed for its
duration, measured on their own clock from the moment they last saw it change (never by comparing clocks
between machines). A leader that cannot renew within `renew_deadline` gives up leadership; since
`renew_deadline < lease_duration`, it stops before anyone else may start, so two leaders never overlap as long
as clocks run at the same rate. A leader that shuts down can `release` the lease (empty holder) so that the next
candidate takes over at its next retry instead of waiting for the lease to expire.

Time comes from a `pyop.workqueue.Clock`, so tests drive the whole protocol with a `FakeClock`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import socket
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pyop.client.errors import ApiConnectionError, ApiError, ConflictError, NotFoundError
from pyop.leaderelection.lease_lock import LeaderElectionRecord, LeaseLock
from pyop.metrics.leader import LeaderElectionMetrics
from pyop.workqueue import Clock, RealClock

__all__ = ["JITTER_FACTOR", "LeaderElector", "default_identity"]

log = logging.getLogger("pyop.leaderelection")

JITTER_FACTOR = 1.2
"""client-go's JitterFactor: a candidate waits retry_period * (1 + random * 1.2) between attempts."""


def default_identity() -> str:
    """`<hostname>_<uuid>`, as controller-runtime names a candidate: unique even for restarts of one pod."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class LeaderElector:
    """One candidate for one lease.

    `await acquire()` returns once this candidate leads; `await keep_leading()` renews and returns when
    leadership is lost; `await release()` hands the lease back. Durations are seconds; client-go's defaults
    (15, 10, 2) are controller-runtime's.
    """

    def __init__(
        self,
        lock: LeaseLock,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Clock | None = None,
        wall_clock: Callable[[], datetime] = _utc_now,
        rng: Callable[[], float] = random.random,
        metrics: LeaderElectionMetrics | None = None,
        on_new_leader: Callable[[str], Any] | None = None,
    ) -> None:
        if lease_duration <= renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError("renew_deadline must be greater than retry_period * 1.2")
        if retry_period <= 0:
            raise ValueError("retry_period must be positive")
        self.lock = lock
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.clock: Clock = clock if clock is not None else RealClock()
        self._wall_clock = wall_clock
        self._rng = rng
        self._metrics = metrics
        self._on_new_leader = on_new_leader
        self._observed: LeaderElectionRecord = LeaderElectionRecord()
        self._observed_spec: dict[str, Any] | None = None
        self._observed_time = 0.0
        self._reported_leader = ""
        self.attempts = 0

    @property
    def identity(self) -> str:
        return self.lock.identity

    def is_leader(self) -> bool:
        """Whether the last record this candidate saw or wrote names it as holder."""
        return self._observed.holder_identity == self.identity

    @property
    def leader(self) -> str:
        """The holder this candidate last observed ("" if none)."""
        return self._observed.holder_identity

    # the protocol

    async def acquire(self) -> None:
        """Retry every `retry_period` (jittered) until this candidate holds the lease."""
        log.info("attempting to acquire leader lease %s...", self.lock.describe())
        while True:
            if await self.try_acquire_or_renew():
                log.info("successfully acquired lease %s", self.lock.describe())
                self._set_leading(True)
                return
            await self._sleep(self.retry_period * (1.0 + self._rng() * JITTER_FACTOR))

    async def keep_leading(self) -> None:
        """Renew every `retry_period`; returns when a renewal round fails for `renew_deadline` seconds."""
        try:
            while True:
                round_started = self.clock.now()
                deadline = round_started + self.renew_deadline
                while not await self._attempt_before(deadline):
                    now = self.clock.now()
                    if now >= deadline:
                        log.info("failed to renew lease %s: timed out", self.lock.describe())
                        return
                    await self._sleep(min(self.retry_period, deadline - now))
                    if self.clock.now() >= deadline:
                        log.info("failed to renew lease %s: timed out", self.lock.describe())
                        return
                await self._sleep(self.retry_period)
        finally:
            self._set_leading(False)

    async def release(self) -> bool:
        """Give the lease up (empty holder, 1 s duration) if this candidate holds it; returns success."""
        if not self.is_leader():
            return True
        now = self._wall_clock()
        record = LeaderElectionRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=now,
            renew_time=now,
            leader_transitions=self._observed.leader_transitions,
        )
        try:
            try:
                await self.lock.update(record)
            except ConflictError:
                # Our cached copy is stale (a renewal cancelled mid-flight still landed): read it and release
                # only if we still hold it.
                current, spec = await self.lock.get()
                if current.holder_identity != self.identity:
                    self._observe(current, spec)
                    self._set_leading(False)
                    return True
                await self.lock.update(record)
        except (ApiError, ApiConnectionError, RuntimeError) as error:
            log.error("failed to release lease %s: %s", self.lock.describe(), error)
            return False
        self._observe(record, record.to_spec())
        self._set_leading(False)
        log.info("released lease %s", self.lock.describe())
        return True

    async def try_acquire_or_renew(self) -> bool:
        """One attempt: create the lease, renew it, or take it over if it expired. Never raises for API errors."""
        self.attempts += 1
        now = self._wall_clock()
        desired = LeaderElectionRecord(
            holder_identity=self.identity,
            lease_duration_seconds=max(1, math.ceil(self.lease_duration)),
            acquire_time=now,
            renew_time=now,
        )
        # Fast path: the leader updates from the lease it wrote last, without reading it first.
        if self.is_leader() and self.lock.has_cached_lease:
            renewed = LeaderElectionRecord(
                holder_identity=self.identity,
                lease_duration_seconds=desired.lease_duration_seconds,
                acquire_time=self._observed.acquire_time,
                renew_time=now,
                leader_transitions=self._observed.leader_transitions,
            )
            try:
                await self.lock.update(renewed)
            except (ApiError, ApiConnectionError) as error:
                log.debug("fast-path renewal of %s failed (%s); reading the lease", self.lock.describe(), error)
            else:
                self._observe(renewed, renewed.to_spec())
                return True
        try:
            current, spec = await self.lock.get()
        except NotFoundError:
            try:
                await self.lock.create(desired)
            except (ApiError, ApiConnectionError) as error:
                log.debug("could not create lease %s: %s", self.lock.describe(), error)
                return False
            self._observe(desired, desired.to_spec())
            return True
        except (ApiError, ApiConnectionError) as error:
            log.error("error retrieving lease %s: %s", self.lock.describe(), error)
            return False
        if spec != self._observed_spec:
            self._observe(current, spec)
        if current.holder_identity and self._lease_valid() and not self.is_leader():
            return False
        if self.is_leader():
            desired = LeaderElectionRecord(
                holder_identity=self.identity,
                lease_duration_seconds=desired.lease_duration_seconds,
                acquire_time=current.acquire_time,
                renew_time=now,
                leader_transitions=current.leader_transitions,
            )
        else:
            desired = LeaderElectionRecord(
                holder_identity=self.identity,
                lease_duration_seconds=desired.lease_duration_seconds,
                acquire_time=now,
                renew_time=now,
                leader_transitions=current.leader_transitions + 1,
            )
        try:
            await self.lock.update(desired)
        except (ApiError, ApiConnectionError) as error:
            log.debug("could not update lease %s: %s", self.lock.describe(), error)
            return False
        self._observe(desired, desired.to_spec())
        return True

    # helpers

    def _lease_valid(self) -> bool:
        """The observed holder's claim still stands, on our clock, from when we saw the record change."""
        return self._observed_time + self._observed.lease_duration_seconds > self.clock.now()

    def _observe(self, record: LeaderElectionRecord, spec: dict[str, Any]) -> None:
        self._observed = record
        self._observed_spec = spec
        self._observed_time = self.clock.now()
        holder = record.holder_identity
        if holder and holder != self._reported_leader:
            self._reported_leader = holder
            if holder != self.identity:
                log.info("new leader elected: %s", holder)
            if self._on_new_leader is not None:
                self._on_new_leader(holder)

    async def _attempt_before(self, deadline: float) -> bool:
        """One renewal attempt, abandoned (as failed) if the API server has not answered by `deadline`."""
        remaining = deadline - self.clock.now()
        if remaining <= 0:
            return False
        try:
            async with asyncio.timeout(remaining):
                return await self.try_acquire_or_renew()
        except TimeoutError:
            return False

    async def _sleep(self, seconds: float) -> None:
        """Sleep on the elector's clock (a FakeClock in tests moves only when the test steps it)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not waiter.done():
                waiter.set_result(None)

        timer = self.clock.call_at(self.clock.now() + seconds, wake)
        try:
            await waiter
        finally:
            timer.cancel()

    def _set_leading(self, leading: bool) -> None:
        if self._metrics is not None:
            self._metrics.set_leading(self.lock.name, leading)
