"""The standalone servers (`pyop test-server`, an aggregated server's `run`) serve on uvloop when it is installed,
as an operator's manager does, and on asyncio's own loop when it is not."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from pyop.apiserver.server import run as apiserver_run
from pyop.testing import standalone
from pyop_scaffold.commands import test_server


def _without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError


def _test_server_loop(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> type[asyncio.AbstractEventLoop]:
    """The type of the loop `pyop test-server` runs its server on (the server itself replaced by a recorder)."""
    seen: list[type[asyncio.AbstractEventLoop]] = []

    async def recorded(options: Any, *, ready: Any) -> None:
        seen.append(type(asyncio.get_running_loop()))

    monkeypatch.setattr(standalone, "run_test_server", recorded)
    options = test_server.resolve_options(tmp_path)
    test_server.serve(options, echo=print)
    assert len(seen) == 1
    return seen[0]


def _apiserver_loop(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> type[asyncio.AbstractEventLoop]:
    """The type of the loop an aggregated server's `run` serves on (serving replaced by a recorder)."""
    seen: list[type[asyncio.AbstractEventLoop]] = []

    async def recorded(groups: Any, options: Any) -> None:
        seen.append(type(asyncio.get_running_loop()))

    monkeypatch.setattr(apiserver_run, "serve", recorded)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        apiserver_run.run([], ["--secure-port=0"])
    assert exited.value.code == 0
    assert len(seen) == 1
    return seen[0]


def test_test_server_runs_on_uvloop_when_installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    uvloop = pytest.importorskip("uvloop")
    assert issubclass(_test_server_loop(monkeypatch, tmp_path), uvloop.Loop)


def test_test_server_runs_on_asyncio_without_uvloop(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _without_uvloop(monkeypatch)
    loop_type = _test_server_loop(monkeypatch, tmp_path)
    assert issubclass(loop_type, asyncio.BaseEventLoop)
    assert loop_type.__module__.startswith("asyncio")


def test_aggregated_server_runs_on_uvloop_when_installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    uvloop = pytest.importorskip("uvloop")
    assert issubclass(_apiserver_loop(monkeypatch, tmp_path), uvloop.Loop)


def test_aggregated_server_runs_on_asyncio_without_uvloop(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _without_uvloop(monkeypatch)
    loop_type = _apiserver_loop(monkeypatch, tmp_path)
    assert issubclass(loop_type, asyncio.BaseEventLoop)
    assert loop_type.__module__.startswith("asyncio")
