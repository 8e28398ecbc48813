"""Backends for the storage contract suite, and a real etcd on loopback (started once per session, stopped after).

Tests that need etcd skip with the reason when no binary is found (``$PYOP_ETCD`` or ``etcd`` on PATH: Debian's
etcd-server); ``PYOP_REQUIRE_ETCD=1`` (set by .ci/run) turns that skip into a failure.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from apiserver_storage.backends import Opener
from pyop.apiserver.storage.etcd.backend import EtcdBackend
from pyop.apiserver.storage.etcd.client import EtcdClient
from pyop.apiserver.storage.etcd.local import LocalEtcd, find_etcd
from pyop.apiserver.storage.file import FileBackend
from pyop.apiserver.storage.memory import MemoryBackend

_prefixes = itertools.count()


def _etcd_binary() -> str:
    binary = find_etcd()
    if binary is None:
        reason = "etcd not found ($PYOP_ETCD or etcd on PATH; Debian: apt-get install etcd-server)"
        if os.environ.get("PYOP_REQUIRE_ETCD") == "1":
            pytest.fail(f"PYOP_REQUIRE_ETCD=1 but {reason}")
        pytest.skip(reason)
    return binary


@pytest.fixture(scope="session")
def etcd() -> Iterator[LocalEtcd]:
    server = LocalEtcd(_etcd_binary()).start()
    yield server
    server.stop()


@pytest.fixture
def etcd_prefix() -> str:
    """A prefix of its own per test: tests share the session's etcd, never each other's keys."""
    return f"/pyop-test-{os.getpid()}-{next(_prefixes)}"


@pytest.fixture(params=["memory", "file", "etcd"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    name = request.param
    if name == "memory":
        shared = MemoryBackend()  # one memory: a second Store over it is a second replica in this process
        result = Opener(name, lambda: shared)
    elif name == "file":
        result = Opener(name, lambda: FileBackend(tmp_path / "objects.jsonl"))
    else:
        server: LocalEtcd = request.getfixturevalue("etcd")
        prefix: str = request.getfixturevalue("etcd_prefix")
        result = Opener(name, lambda: EtcdBackend(EtcdClient(server.url), prefix))
    yield result
    result.close_all()
