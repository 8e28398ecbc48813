"""A watch is dropped as stalled after `stall_timeout` of silence counted from its last event, never while events
keep coming more often than that, however long the stream lasts (the reflector's one silence timer)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from informer_helpers import WIDGETS

from pyop.client.dynamic import EventType, ObjectList, WatchEvent
from pyop.informers.reflector import Reflector

STALL = 0.5
SLACK = 1.0  # how late a drop may come on a loaded machine (a drop before the last event fails the events check)


class _Sink:
    def __init__(self) -> None:
        self.events: list[str] = []

    def prepare(self, obj: dict[str, Any]) -> dict[str, Any]:
        return obj

    def replace(self, items: list[dict[str, Any]], resource_version: str, namespace: str | None) -> None:
        pass

    def apply_event(self, event: WatchEvent[dict[str, Any]]) -> None:
        self.events.append(event.resource_version)


class _ScriptedClient:
    """Lists nothing; its first watch sends events `gaps` seconds apart, then says nothing until closed."""

    def __init__(self, gaps: list[float]) -> None:
        self.gaps = gaps
        self.watch_ended: list[float] = []  # loop time at which each watch stream was closed
        self.last_event_at = 0.0
        self.watches = 0

    async def list(self, *args: Any, **kwargs: Any) -> ObjectList[dict[str, Any]]:
        return ObjectList(items=[], resource_version="1")

    async def watch(self, *args: Any, **kwargs: Any) -> AsyncIterator[WatchEvent[dict[str, Any]]]:
        self.watches += 1
        loop = asyncio.get_running_loop()
        gaps = self.gaps if self.watches == 1 else []
        try:
            for number, gap in enumerate(gaps, 2):
                await asyncio.sleep(gap)
                self.last_event_at = loop.time()
                yield WatchEvent(EventType.MODIFIED, {"metadata": {"name": "w"}}, str(number))
            await asyncio.sleep(3600)
        finally:
            self.watch_ended.append(loop.time())


async def _run_until_first_stall(client: _ScriptedClient, sink: _Sink) -> Reflector:
    reflector = Reflector(client, WIDGETS, sink, stall_timeout=STALL)  # type: ignore[arg-type]
    task = asyncio.ensure_future(reflector.run())
    try:
        async with asyncio.timeout(30):
            while not client.watch_ended:
                await asyncio.sleep(0.01)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    return reflector


async def test_events_more_often_than_the_stall_timeout_keep_a_long_watch_open() -> None:
    # 20 events 0.1 s apart: the stream lasts ~2 s, four stall timeouts, and is never silent for one.
    client = _ScriptedClient([0.1] * 20)
    sink = _Sink()
    reflector = await _run_until_first_stall(client, sink)
    assert sink.events == [str(number) for number in range(2, 22)]  # every event arrived before the stall
    assert reflector.stats.stalls >= 1
    silence = client.watch_ended[0] - client.last_event_at
    assert STALL <= silence < STALL + SLACK  # dropped a stall timeout after the last event, not after the first


async def test_silence_is_counted_from_the_last_event() -> None:
    # Gaps just under the stall timeout, then silence: each gap alone must not end the watch.
    client = _ScriptedClient([0.3, 0.35, 0.3])
    sink = _Sink()
    reflector = await _run_until_first_stall(client, sink)
    assert sink.events == ["2", "3", "4"]
    assert reflector.stats.stalls >= 1
    assert reflector.resource_version == "4"  # the reopened watch resumes after the last event
    silence = client.watch_ended[0] - client.last_event_at
    assert STALL <= silence < STALL + SLACK


async def test_a_silent_watch_is_dropped_after_the_stall_timeout() -> None:
    client = _ScriptedClient([])
    sink = _Sink()
    started = asyncio.get_running_loop().time()
    reflector = await _run_until_first_stall(client, sink)
    assert reflector.stats.stalls == 1 and sink.events == []
    assert STALL <= client.watch_ended[0] - started < STALL + SLACK
