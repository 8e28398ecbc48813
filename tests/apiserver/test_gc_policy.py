"""While a server listens, long-lived objects are frozen out of the garbage collector's scans (short pauses); when
the last server stops, the collector gets them all back (nothing is kept past the servers' lifetime)."""

from __future__ import annotations

import gc

import pytest

from pyop import gcpolicy
from pyop.testing import TestAPIServer


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_serving_freezes_survivors_and_the_last_server_hands_them_back() -> None:
    if gcpolicy._servers:
        pytest.skip("another server of this process is listening")
    assert gc.get_freeze_count() == 0
    gcpolicy.serving_starts()
    gcpolicy.serving_starts()  # a second server in the process
    try:
        frozen_at_start = gc.get_freeze_count()
        assert frozen_at_start > 0
        kept = [Cycle() for _ in range(100)]
        gc.collect(1)  # a collection of the middle generation: its survivors are long-lived, frozen too
        assert gc.get_freeze_count() > frozen_at_start
        gcpolicy.serving_ends()
        assert gc.get_freeze_count() > 0  # one server still listens
    finally:
        gcpolicy.serving_ends()
    assert gc.get_freeze_count() == 0 and gcpolicy._freeze_after_middle_collections not in gc.callbacks
    del kept
    assert gc.collect() >= 100  # the cycles frozen while serving are collected once back
    gcpolicy.serving_ends()  # more ends than starts: nothing happens
    assert gc.get_freeze_count() == 0


async def test_a_test_server_freezes_while_it_listens() -> None:
    if gcpolicy._servers:
        pytest.skip("another server of this process is listening")
    async with TestAPIServer() as server:
        assert server.url and gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
