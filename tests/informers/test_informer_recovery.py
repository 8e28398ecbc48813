"""Fast recovery: with its default backoff an informer is in step again within 2 s of the API server answering
after a restart (not listening) or an outage (503s), also when an earlier outage had grown the backoff; the
backoff is bounded, jittered, and reset by a productive watch."""

from __future__ import annotations

import asyncio
import time

from informer_helpers import WIDGETS, Recorder, body

from pyop.apiserver.registry.operations import WriteOptions
from pyop.client import DynamicClient
from pyop.informers import Backoff, Informer
from pyop.testing import TestAPIServer

RECOVERY_BOUND = 2.0


def test_the_default_backoff_is_bounded_jittered_and_resets() -> None:
    draws = iter([0.0, 1.0] * 50)
    backoff = Backoff(rng=lambda: next(draws))
    delays = [backoff.next() for _ in range(20)]
    assert delays[:4] == [0.2, 0.8, 0.5, 1.0]  # 0.2 (no jitter), 0.4 doubled by jitter, then capped at 0.5
    assert max(delays) == 1.0 and min(delays[2:]) == 0.5
    backoff.reset()
    assert backoff.next() == 0.2


def create_while_away(server: TestAPIServer, name: str) -> None:
    """Another client's write, made while this client cannot reach the server."""
    server.operations.create(
        server.resources.lookup(WIDGETS.group, WIDGETS.version, WIDGETS.plural),
        "default",
        body(name),
        WriteOptions(field_manager="elsewhere"),
    )


async def in_step_after(informer: Informer, name: str, since: float) -> float:
    while informer.store.get(name, "default") is None:
        assert time.monotonic() - since < 30, f"{name} never reached the informer"
        await asyncio.sleep(0.01)
    return time.monotonic() - since


async def test_informers_are_in_step_within_2s_of_a_restart_or_an_outage_ending(
    dynamic: DynamicClient, server: TestAPIServer
) -> None:
    for index in range(20):
        await dynamic.create(WIDGETS, body(f"w{index}"))
    recorder = Recorder()
    informer = Informer(dynamic, WIDGETS, stall_timeout=5.0)  # the default backoff
    informer.add_event_handler(recorder)
    recoveries = []
    async with informer:
        assert await informer.wait_for_sync(10)

        await server.stop_listening()  # a restart: connections refused for 1.5 s
        await asyncio.sleep(1.5)
        create_while_away(server, "during-restart")
        await server.start_listening()
        recoveries.append(await in_step_after(informer, "during-restart", time.monotonic()))

        server.faults.respond(503, times=None)  # an outage: every request answered 503 for 4 s
        server.faults.close_watches()
        await asyncio.sleep(4.0)
        create_while_away(server, "during-outage")
        server.faults.clear()
        recoveries.append(await in_step_after(informer, "during-outage", time.monotonic()))

        await asyncio.sleep(0.5)
        await server.stop_listening()  # a second restart meets the backoff the outage grew, unless it was reset
        await asyncio.sleep(1.5)
        create_while_away(server, "after-outage")
        await server.start_listening()
        recoveries.append(await in_step_after(informer, "after-outage", time.monotonic()))

    reflector = informer.reflectors[0]
    assert reflector.stats.failures >= 4  # it did fail while the server was away
    assert max(recoveries) < RECOVERY_BOUND, recoveries
    assert recorder.problems == []
    added = {key for kind, key in recorder.events if kind == "add"}
    assert {"default/during-restart", "default/during-outage", "default/after-outage"} <= added
