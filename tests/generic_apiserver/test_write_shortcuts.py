"""The registry's write-path shortcuts give exactly the general path's answers: each test compares a shortcut with
the code it stands in for (and fails when the shortcut is broken)."""

from __future__ import annotations

import os
import types
import uuid
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.api.uids import RandomUIDs, format_uids, new_uid
from pyop.apiserver.registry import operations as operations_module
from pyop.apiserver.registry.clock import utc_now
from pyop.apiserver.registry.operations import Operations
from pyop.apiserver.registry.resources import ResourceRegistry
from pyop.apiserver.storage.store import Store
from pyop.testing import TestAPIServer


def _operations(clock: object) -> Operations:
    return Operations(Store(10), ResourceRegistry([]), clock=clock, users={}, bookmark_interval=1.0)  # type: ignore[arg-type]


# --- timestamps: the system clock read as time.time() ---------------------------------------------------------

_moments = st.lists(
    st.tuples(st.integers(0, 2**34), st.integers(0, 999_999)).map(lambda pair: pair[0] + pair[1] / 1e6),
    min_size=1,
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(_moments)
def test_the_system_clock_shortcut_formats_what_the_general_path_formats(moments: list[float]) -> None:
    """`now()` of the system clock (`utc_now`: second from time.time()) is the general path's answer for a clock
    returning that moment as a datetime, call after call (the once-a-second cache included)."""
    current = [0.0]
    fast = _operations(utc_now)
    general = _operations(lambda: datetime.fromtimestamp(current[0], UTC))
    original = operations_module.time
    operations_module.time = types.SimpleNamespace(time=lambda: current[0])  # type: ignore[assignment]
    try:
        for moment in moments:
            current[0] = moment
            assert fast.now() == general.now()
    finally:
        operations_module.time = original


def test_the_test_server_runs_on_the_clock_the_registry_reads_fastest() -> None:
    server = TestAPIServer(tls=False)
    assert server.operations.clock is utc_now
    before = datetime.now(UTC).replace(microsecond=0)
    stamp = datetime.strptime(server.operations.now(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before <= stamp <= datetime.now(UTC)


# --- uids: str(uuid.uuid4()) made in batches ------------------------------------------------------------------


@given(st.integers(1, 20).flatmap(lambda n: st.binary(min_size=16 * n, max_size=16 * n)))
def test_batched_uids_are_the_strings_uuid4_makes_of_the_same_bytes(raw: bytes) -> None:
    expected = [str(uuid.UUID(bytes=raw[i : i + 16], version=4)) for i in range(0, len(raw), 16)]
    assert format_uids(raw) == expected


def test_new_uids_are_version_4_and_unique_across_batches() -> None:
    made = [new_uid() for _ in range(1000)]  # several batches of 256
    assert len(set(made)) == len(made)
    for uid in made:
        parsed = uuid.UUID(uid)
        assert str(parsed) == uid and parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_a_forked_child_does_not_hand_out_its_parents_uids() -> None:
    source = RandomUIDs()
    source.next()  # a batch is pending in the parent
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child process
        os.write(writer, source.next().encode())
        os._exit(0)
    os.close(writer)
    os.waitpid(child, 0)
    childs = os.read(reader, 100).decode()
    os.close(reader)
    assert childs != source.next()
