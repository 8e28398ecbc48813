"""The JSON of the Go types whose protobuf message is not their JSON shape: metav1.Time and MicroTime (RFC 3339
strings; Time keeps whole seconds on both wires), metav1.Duration (Go's `1h2m0.5s` notation) and their parsers.

Go's zero time is the JSON `null` and an empty protobuf message; the codec handles that, not these functions.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Final

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_NANOS: Final = 1_000_000_000
_UNITS: Final = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ms": 1_000_000,
    "s": _NANOS,
    "m": 60 * _NANOS,
    "h": 3600 * _NANOS,
}
_DURATION_PART: Final = re.compile(r"(\d*)(?:\.(\d*))?([a-zµμ]+)")


class GoValueError(ValueError):
    """A string that Go's time or duration parser refuses (the message names the value)."""


def format_time(seconds: int) -> str:
    """metav1.Time: `2006-01-02T15:04:05Z` (UTC, whole seconds)."""
    return (_EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(seconds: int, nanos: int) -> str:
    """metav1.MicroTime: `2006-01-02T15:04:05.000000Z` (UTC, microseconds, truncated)."""
    moment = _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> tuple[int, int]:
    """(seconds, nanoseconds) since the epoch of an RFC 3339 time (any offset, any fraction up to nanoseconds)."""
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})", text)
    if match is None:
        raise GoValueError(f'parsing time "{text}" as RFC 3339: cannot parse')
    base, fraction, zone = match.groups()
    try:
        moment = datetime.fromisoformat(base.replace("t", "T") + ("+00:00" if zone in "Zz" else zone))
    except ValueError:
        raise GoValueError(f'parsing time "{text}": out of range') from None
    delta = moment - _EPOCH
    seconds = delta.days * 86400 + delta.seconds
    nanos = int((fraction or "0").ljust(9, "0"))
    return seconds, nanos


def format_duration(nanoseconds: int) -> str:
    """Go's time.Duration.String()."""
    if nanoseconds == 0:
        return "0s"
    sign = "-" if nanoseconds < 0 else ""
    value = abs(nanoseconds)
    if value < _NANOS:
        if value < 1_000:
            return f"{sign}{value}ns"
        if value < 1_000_000:
            return f"{sign}{_fraction(value, 3)}µs"
        return f"{sign}{_fraction(value, 6)}ms"
    seconds = _fraction(value % (60 * _NANOS), 9) + "s"
    minutes_total = value // (60 * _NANOS)
    if minutes_total == 0:
        return sign + seconds
    hours = minutes_total // 60
    text = f"{minutes_total % 60}m{seconds}"
    return f"{sign}{hours}h{text}" if hours else sign + text


def _fraction(value: int, precision: int) -> str:
    scale = 10**precision
    whole, rest = divmod(value, scale)
    digits = str(rest).rjust(precision, "0").rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def parse_duration(text: str) -> int:
    """Go's time.ParseDuration, in nanoseconds (`1h30m`, `1.5s`, `-2ms`, `0`)."""
    body = text
    sign = 1
    if body and body[0] in "+-":
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return 0
    if not body:
        raise GoValueError(f'time: invalid duration "{text}"')
    total = Fraction(0)
    index = 0
    while index < len(body):
        match = _DURATION_PART.match(body, index)
        if match is None or (not match.group(1) and not match.group(2)):
            raise GoValueError(f'time: invalid duration "{text}"')
        unit = _UNITS.get(match.group(3))
        if unit is None:
            raise GoValueError(f'time: unknown unit "{match.group(3)}" in duration "{text}"')
        number = Fraction(int(match.group(1) or "0"))
        if match.group(2):
            number += Fraction(int(match.group(2)), 10 ** len(match.group(2)))
        total += number * unit
        index = match.end()
    result = int(total) * sign
    if not -(1 << 63) <= result < 1 << 63:
        raise GoValueError(f'time: invalid duration "{text}"')
    return result
