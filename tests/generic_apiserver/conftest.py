"""The HTTP transport's tests run on both event loops: the standalone servers (`pyop test-server`, an aggregated
server's `run`) serve on uvloop when it is installed, the in-process `TestAPIServer` of most tests on asyncio's."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import pytest


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    factories: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {"asyncio": asyncio.new_event_loop}
    if item.path.name == "test_http_transport.py":
        try:
            import uvloop
        except ImportError:  # an optional speed-up: without it the standalone servers run on asyncio's loop too
            return factories
        factories["uvloop"] = uvloop.new_event_loop
    return factories
