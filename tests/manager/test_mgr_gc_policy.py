"""While a manager runs, the process's long-lived objects are frozen out of the collector's scans (the API
servers' policy, counted with theirs); once it stops, the collector gets them all back."""

from __future__ import annotations

import gc

import pytest

from pyop import gcpolicy
from pyop.client import ClientConfig
from pyop.manager import Manager, ManagerOptions
from pyop.testing import TestAPIServer


def _manager() -> Manager:
    return Manager(
        ManagerOptions(
            config=ClientConfig(server="http://127.0.0.1:9"),  # no controller: nothing connects
            metrics_bind_address="0",
            health_probe_bind_address="0",
            handle_signals=False,
        )
    )


async def test_a_running_manager_freezes_and_hands_back_when_it_stops() -> None:
    if gcpolicy._servers:
        pytest.skip("a server of this process is listening")
    assert gc.get_freeze_count() == 0
    async with _manager():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0 and gcpolicy._freeze_after_middle_collections not in gc.callbacks


async def test_a_manager_stopping_keeps_the_policy_of_a_server_still_listening() -> None:
    if gcpolicy._servers:
        pytest.skip("a server of this process is listening")
    async with TestAPIServer() as server:
        async with _manager():
            pass
        assert server.url and gc.get_freeze_count() > 0  # the server still listens
    assert gc.get_freeze_count() == 0
