"""The connection pool's dial limit: a few connections are made at a time, and an exchange waiting for one takes
whichever comes first, a connection another exchange releases or leave to make its own."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from yarl import URL

from pyop.client.pool import ConnectionPool


class _FakeConnection:
    """What the pool asks of a connection: whether it can carry another exchange, and closing it."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.reusable = True
        self.idle_since = 0.0
        self.closed = False

    def close(self) -> None:
        self.closed = True
        self.reusable = False

    def abort(self) -> None:
        self.close()


class _Dials:
    """Stands in for the pool's `_connect`: each dial waits until the test lets it finish (or fail)."""

    def __init__(self) -> None:
        self.pending: list[asyncio.Future[None]] = []
        self.made = 0
        self.in_flight = 0
        self.most_in_flight = 0

    async def connect(self) -> Any:
        gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.pending.append(gate)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await gate
        finally:
            self.in_flight -= 1
        self.made += 1
        return _FakeConnection(self.made)

    def finish(self, error: Exception | None = None) -> None:
        gate = self.pending.pop(0)
        if error is None:
            gate.set_result(None)
        else:
            gate.set_exception(error)


def _pool(dials: _Dials, *, limit: int = 100, dial_limit: int = 4) -> ConnectionPool:
    pool = ConnectionPool(URL("http://127.0.0.1:1"), ssl_context=None, limit=limit, dial_limit=dial_limit)
    pool._connect = dials.connect  # type: ignore[method-assign]
    return pool


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_no_more_than_the_dial_limit_are_made_at_once() -> None:
    dials = _Dials()
    pool = _pool(dials, dial_limit=2)
    exchanges = [asyncio.create_task(pool.acquire()) for _ in range(6)]
    await _settle()
    assert dials.in_flight == 2
    while dials.pending:
        dials.finish()
        await _settle()
    results = await asyncio.gather(*exchanges)
    assert dials.most_in_flight == 2
    assert sorted(connection.number for connection, reused in results) == [1, 2, 3, 4, 5, 6]  # type: ignore[attr-defined]
    assert not any(reused for _, reused in results)


async def test_a_waiting_exchange_takes_a_released_connection_before_its_own_dial_ends() -> None:
    dials = _Dials()
    pool = _pool(dials, dial_limit=1)
    first = asyncio.create_task(pool.acquire())
    second = asyncio.create_task(pool.acquire())
    await _settle()
    dials.finish()  # the first exchange's connection; the second is given leave to dial
    connection, reused = await first
    await _settle()
    assert dials.in_flight == 1 and not second.done()
    third = asyncio.create_task(pool.acquire())
    await _settle()
    assert not third.done()  # one dial at a time: it waits
    pool.release(connection)  # ... and gets the released connection while the second's dial is still going
    handed, reused = await asyncio.wait_for(third, 1)
    assert handed is connection and reused
    dials.finish()
    made, reused = await asyncio.wait_for(second, 1)
    assert made is not connection and not reused
    assert dials.made == 2


async def test_a_failed_dial_hands_its_turn_to_a_waiting_exchange() -> None:
    dials = _Dials()
    pool = _pool(dials, dial_limit=1)
    failing = asyncio.create_task(pool.acquire())
    waiting = asyncio.create_task(pool.acquire())
    await _settle()
    dials.finish(ConnectionRefusedError("refused"))
    with pytest.raises(ConnectionRefusedError):
        await failing
    await _settle()
    assert dials.in_flight == 1  # the waiting exchange dials now
    dials.finish()
    connection, reused = await asyncio.wait_for(waiting, 1)
    assert not reused and pool._slots_taken == 1 and pool._dialing == 0


async def test_the_connection_limit_still_bounds_dials() -> None:
    dials = _Dials()
    pool = _pool(dials, limit=2, dial_limit=4)
    exchanges = [asyncio.create_task(pool.acquire()) for _ in range(3)]
    await _settle()
    assert dials.in_flight == 2  # the limit, not the dial limit, is what stops the third
    dials.finish()
    dials.finish()
    await _settle()
    first, _ = exchanges[0].result()
    assert not exchanges[2].done()
    pool.release(first)
    handed, reused = await asyncio.wait_for(exchanges[2], 1)
    assert handed is first and reused and dials.made == 2


async def test_a_cancelled_waiter_does_not_keep_the_turn_to_dial() -> None:
    dials = _Dials()
    pool = _pool(dials, dial_limit=1)
    dialing = asyncio.create_task(pool.acquire())
    cancelled = asyncio.create_task(pool.acquire())
    later = asyncio.create_task(pool.acquire())
    await _settle()
    cancelled.cancel()
    await _settle()
    dials.finish()
    await dialing
    await _settle()
    assert dials.in_flight == 1  # the turn went to the exchange still waiting
    dials.finish()
    _, reused = await asyncio.wait_for(later, 1)
    assert not reused and pool._dialing == 0 and pool._slots_taken == 2


def test_a_dial_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="dial limit must be at least 1, got 0"):
        ConnectionPool(URL("http://127.0.0.1:1"), ssl_context=None, dial_limit=0)
