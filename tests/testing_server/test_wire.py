"""Response and watch-event encoding: the fast path and the standard-library fallback give the same JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pyop.apiserver.endpoints.wire import dumps, event_line

VALUES: list[Any] = [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {}}, "data": {"k": "v"}},
    {"text": 'héllo ☃ \u2028 "quoted" \\ / \n', "emoji": "\U0001f600"},
    {"numbers": [0, -1, 2**63 - 1, -(2**63), 1.5, 1e16, 1e-7, 0.1, True, False, None]},
    {"big": 2**64 + 1, "nested": [{"bigger": -(2**80)}]},  # beyond 64 bits: the fallback writes them exactly
    {1: "non-string key"},  # the fallback turns it into "1", as json.dumps always did
    [],
    "plain",
]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_reads_back_as_json_dumps_does(value: Any) -> None:
    encoded = dumps(value)
    assert isinstance(encoded, bytes)
    assert json.loads(encoded) == json.loads(json.dumps(value))


def test_event_line_is_one_compact_line() -> None:
    line = event_line("MODIFIED", {"metadata": {"name": "a\nb"}})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"type": "MODIFIED", "object": {"metadata": {"name": "a\nb"}}}
