"""The watch path's shortcuts against its general path: an unselective watcher's `deliver` queues what the
selector-matching path queues, a committed event's cached line is the line the uncached encoder writes for each
watcher (version, table, protobuf), and a sleeping stream wakes for an event and at its deadline."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.apiserver.endpoints.watch import Watcher
from pyop.apiserver.endpoints.wire import dumps, event_line
from pyop.apiserver.registry.conversion import served_as
from pyop.apiserver.storage.store import StoredEvent


class _Type:
    """What a Watcher reads of its ResourceType (a kind without a conversion webhook)."""

    kind = "Widget"
    conversion = None

    def __init__(self, api_version: str = "example.dev/v1") -> None:
        self.api_version = api_version


def _watcher(api_version: str = "example.dev/v1", timeout: float | None = None) -> Watcher:
    return Watcher(
        _Type(api_version),  # type: ignore[arg-type]
        None,
        (),
        (),
        bookmarks=False,
        bookmark_interval=60.0,
        timeout=timeout,
        current_rv=lambda: 7,
    )


_objects = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "apiVersion": st.sampled_from(["example.dev/v1", "example.dev/v2"]),
            "kind": st.just("Widget"),
            "metadata": st.fixed_dictionaries(
                {"name": st.sampled_from(["a", "b"]), "namespace": st.sampled_from(["", "n1"])},
                optional={"labels": st.dictionaries(st.sampled_from(["x", "y"]), st.sampled_from(["1", "2"]))},
            ),
        },
        optional={"spec": st.dictionaries(st.text(max_size=3), st.integers() | st.text(max_size=3), max_size=3)},
    ),
)
_events = st.lists(
    st.tuples(st.sampled_from(["ADDED", "MODIFIED", "DELETED"]), _objects, _objects), min_size=1, max_size=12
)


@settings(max_examples=300, deadline=None)
@given(_events)
def test_an_unselective_watcher_queues_what_the_matching_path_queues(events: list[tuple[str, Any, Any]]) -> None:
    fast, general = _watcher(), _watcher()
    general._filtered = True  # noqa: SLF001 - no selectors, so every object matches: the general path's answer
    for rv, (event_type, obj, prev) in enumerate(events, 1):
        event = StoredEvent(rv, event_type, "widgets.example.dev", obj, prev)
        fast.deliver(event)
        general.deliver(event)
    assert list(fast._items) == list(general._items)  # noqa: SLF001


def _uncached(watcher: Watcher, event_type: str, obj: dict[str, Any]) -> bytes:
    """What the general path writes: the object as the watcher's version serves it, encoded, no cache."""
    wire = served_as(obj, watcher.resource_type)
    if watcher.table is not None:
        wire = watcher.table(wire)
    return watcher.encode_event(event_type, wire)


def _table(obj: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Table", "rows": [{"cells": [obj["metadata"]["name"]]}]}


def _framed(event_type: str, obj: dict[str, Any]) -> bytes:
    return b"frame:" + event_line(event_type, obj)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["ADDED", "MODIFIED", "DELETED"]), _objects.filter(bool)), min_size=1),
    st.lists(
        st.tuples(st.sampled_from(["example.dev/v1", "example.dev/v2"]), st.sampled_from(["json", "table", "proto"])),
        min_size=1,
        max_size=5,
    ),
)
def test_a_cached_event_line_is_the_line_each_watcher_would_encode(
    events: list[tuple[str, dict[str, Any]]], kinds: list[tuple[str, str]]
) -> None:
    watchers = []
    for api_version, output in kinds:
        watcher = _watcher(api_version)
        if output == "table":
            watcher.table = _table
        elif output == "proto":
            watcher.encode_event = _framed
        watchers.append(watcher)
    for rv, (event_type, obj) in enumerate(events, 1):
        event = StoredEvent(rv, event_type, "widgets.example.dev", obj, obj)
        for watcher in watchers:  # every watcher renders the same event, in turn: the later ones meet the cache
            watcher.deliver(event)
            item = watcher._items.popleft()  # noqa: SLF001
            assert watcher._line(item) == _uncached(watcher, event_type, obj)  # noqa: SLF001


class _Response:
    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    async def write(self, data: bytes) -> None:
        self.chunks.append(data)


async def test_a_sleeping_stream_wakes_for_an_event_and_ends_at_its_deadline() -> None:
    watcher = _watcher(timeout=0.6)
    response = _Response()
    began = time.monotonic()
    stream = asyncio.ensure_future(watcher.stream(response))  # type: ignore[arg-type]
    await asyncio.sleep(0.1)  # the stream is asleep, nothing queued
    assert response.chunks == []
    obj = {"apiVersion": "example.dev/v1", "kind": "Widget", "metadata": {"name": "a", "namespace": ""}}
    watcher.deliver(StoredEvent(1, "ADDED", "widgets.example.dev", obj, None))
    await asyncio.sleep(0.05)
    assert response.chunks == [event_line("ADDED", obj)]  # woken by the event, long before the deadline
    await asyncio.wait_for(stream, 5)
    assert 0.55 <= time.monotonic() - began < 3  # then it slept until its timeout and ended
    assert watcher._waiter is None  # noqa: SLF001


async def test_closing_a_sleeping_stream_ends_it_at_once() -> None:
    watcher = _watcher()
    stream = asyncio.ensure_future(watcher.stream(_Response()))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    watcher.close()
    await asyncio.wait_for(stream, 0.5)  # far sooner than DISCONNECT_CHECK


async def test_a_cancelled_stream_leaves_no_timer_or_waiter() -> None:
    watcher = _watcher(timeout=30)
    stream = asyncio.ensure_future(watcher.stream(_Response()))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    stream.cancel()
    await asyncio.gather(stream, return_exceptions=True)
    assert watcher._waiter is None  # noqa: SLF001
    watcher.deliver(  # an event after the stream went away queues and wakes nothing
        StoredEvent(1, "ADDED", "widgets.example.dev", {"metadata": {"name": "a"}}, None)
    )
    assert len(watcher._items) == 1  # noqa: SLF001


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)  # beyond 64 bits: the standard library's encoder
    | st.floats(allow_nan=True)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3) | st.integers(0, 3), inner, max_size=3)
    ),  # int keys: also the fallback
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]), st.dictionaries(st.text(max_size=4), _json)
)
def test_an_event_line_is_the_encoded_event_and_a_newline(event_type: str, obj: dict[str, Any]) -> None:
    assert event_line(event_type, obj) == dumps({"type": event_type, "object": obj}) + b"\n"


def test_an_event_line_refuses_what_dumps_refuses() -> None:
    import datetime

    import pytest

    obj = {"metadata": {"creationTimestamp": datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)}}
    with pytest.raises(TypeError):
        dumps(obj)
    with pytest.raises(TypeError):
        event_line("ADDED", obj)
