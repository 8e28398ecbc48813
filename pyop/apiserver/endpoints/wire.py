"""JSON encoding of responses and watch events: orjson when it can, the standard library when not.

Encoding is the largest cost of a watch event and a large part of every response: orjson
writes a typical custom resource about 15 times faster than ``json.dumps``. It is used only
for the plain JSON types (``OPT_PASSTHROUGH_*`` hands everything else back): a value it
refuses (an integer beyond 64 bits, a non-string key, a datetime from a YAML apply body)
goes to ``json.dumps`` and comes out as before. The one visible difference: a NaN that
Python's decoder accepted in a request is written as ``null`` instead of the invalid ``NaN``.
Request bodies are still decoded by ``json.loads``: orjson turns integers beyond 64 bits into
floats, which would change stored values.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_PLAIN_JSON_ONLY = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS


def dumps(value: Any) -> bytes:
    """Compact JSON bytes of a decoded-JSON value."""
    try:
        return orjson.dumps(value, option=_PLAIN_JSON_ONLY)
    except TypeError:  # orjson.JSONEncodeError included
        return json.dumps(value, separators=(",", ":")).encode()


_EVENT_LINE = _PLAIN_JSON_ONLY | orjson.OPT_APPEND_NEWLINE


def event_line(event_type: str, obj: dict[str, Any]) -> bytes:
    """One line of a watch stream: `dumps` of the event and a newline (orjson writes the newline itself, which
    spares a copy of every line)."""
    event = {"type": event_type, "object": obj}
    try:
        return orjson.dumps(event, option=_EVENT_LINE)
    except TypeError:  # orjson.JSONEncodeError included
        return dumps(event) + b"\n"
