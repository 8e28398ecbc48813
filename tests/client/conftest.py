"""Fixtures live in client_helpers (a uniquely named module, so tests can import its helpers too)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import pytest
from client_helpers import client, server, sleeps

__all__ = ["client", "server", "sleeps"]


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    """The wire tests run on both loops (operators run on uvloop through `pyop.manager.run`, most tests on
    asyncio's own); the other client tests on asyncio's."""
    factories: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {"asyncio": asyncio.new_event_loop}
    if item.path.name == "test_wire.py":
        try:
            import uvloop
        except ImportError:  # an optional speed-up: without it, operators run on asyncio's loop too
            return factories
        factories["uvloop"] = uvloop.new_event_loop
    return factories
