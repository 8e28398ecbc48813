"""Fixtures for the work-queue tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pyop.workqueue import FakeClock, set_provider


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=1000.0)


@pytest.fixture(autouse=True)
def _no_global_metrics_provider() -> Iterator[None]:
    """Tests that set the global provider must not leak it into others."""
    set_provider(None)
    yield
    set_provider(None)
