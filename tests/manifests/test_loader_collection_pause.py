"""Importing a project pauses the cyclic collector and leaves the process's collector as it found it."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from pyop_scaffold.manifests.loader import _cyclic_collection_paused


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


@pytest.fixture
def collector_enabled() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    if not was_enabled:
        gc.disable()


@pytest.mark.usefixtures("collector_enabled")
def test_collection_pauses_inside_and_resumes_after() -> None:
    with _cyclic_collection_paused():
        assert not gc.isenabled()
        cycle = _Node()
        alive = weakref.ref(cycle)
        del cycle
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert alive() is None  # a full collection still frees the cycles made meanwhile


def test_a_disabled_collector_stays_disabled() -> None:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        with _cyclic_collection_paused():
            pass
        assert not gc.isenabled()
    finally:
        if was_enabled:
            gc.enable()


@pytest.mark.usefixtures("collector_enabled")
def test_objects_someone_else_froze_stay_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with _cyclic_collection_paused():
            _Node()
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
