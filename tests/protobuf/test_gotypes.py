"""Go's time and duration notations, as metav1.Time, MicroTime and Duration write and read them."""

from __future__ import annotations

import pytest

from pyop.apiserver.endpoints.protobuf.gotypes import (
    GoValueError,
    format_duration,
    format_micro_time,
    format_time,
    parse_duration,
    parse_time,
)

SECOND = 1_000_000_000


@pytest.mark.parametrize(
    ("nanoseconds", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (1_100, "1.1µs"),
        (2_200_000, "2.2ms"),
        (SECOND + SECOND // 2, "1.5s"),
        (60 * SECOND, "1m0s"),
        (3600 * SECOND, "1h0m0s"),
        (-(90 * 60 * SECOND), "-1h30m0s"),
        (72 * 3600 * SECOND + 3 * 60 * SECOND + SECOND // 2, "72h3m0.5s"),
    ],
)
def test_durations_print_as_go_does(nanoseconds: int, text: str) -> None:
    assert format_duration(nanoseconds) == text
    assert parse_duration(text) == nanoseconds


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [("0", 0), ("1.5h", 90 * 60 * SECOND), ("300ms", 300_000_000), ("+2us", 2_000), ("1h30m", 90 * 60 * SECOND)],
)
def test_durations_parse_as_go_does(text: str, nanoseconds: int) -> None:
    assert parse_duration(text) == nanoseconds


@pytest.mark.parametrize("text", ["", "1", "h", "1x", "-", "1.5.5s"])
def test_bad_durations_name_the_value(text: str) -> None:
    with pytest.raises(GoValueError, match="duration"):
        parse_duration(text)


def test_times() -> None:
    assert format_time(0) == "1970-01-01T00:00:00Z"
    assert format_time(-1) == "1969-12-31T23:59:59Z"
    assert format_micro_time(1, 123_456_789) == "1970-01-01T00:00:01.123456Z"
    assert parse_time("2024-01-02T03:04:05Z") == (1704164645, 0)
    assert parse_time("2024-01-02T04:04:05.5+01:00") == (1704164645, 500_000_000)
    with pytest.raises(GoValueError, match="2024-01-02"):
        parse_time("2024-01-02")
