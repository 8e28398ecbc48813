"""Time and MicroTime are written by %-formatting: the same strings strftime writes, for any datetime (aware in
any offset, or naive and taken as UTC), including the years before 1000, which keep strftime's answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from pyop.api.builtin_types import _rfc3339_micros, _rfc3339_seconds, _utc

offsets = st.one_of(
    st.none(),
    st.just(UTC),
    st.integers(min_value=-23 * 60 - 59, max_value=23 * 60 + 59).map(
        lambda minutes: timezone(timedelta(minutes=minutes))
    ),
)
moments = st.builds(
    lambda moment, zone: moment.replace(tzinfo=zone),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    offsets,
)


@given(moments)
def test_seconds_are_written_as_strftime_writes_them(moment: datetime) -> None:
    assert _rfc3339_seconds(moment) == _utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


@given(moments)
def test_microseconds_are_written_as_strftime_writes_them(moment: datetime) -> None:
    assert _rfc3339_micros(moment) == _utc(moment).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_the_edges_of_the_four_digit_years() -> None:
    for moment in (datetime(999, 12, 31, 23, 59, 59, tzinfo=UTC), datetime(1000, 1, 1, tzinfo=UTC)):
        assert _rfc3339_seconds(moment) == moment.strftime("%Y-%m-%dT%H:%M:%SZ")
        assert _rfc3339_micros(moment) == moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert _rfc3339_seconds(datetime(2024, 5, 1, 10, 20, 30, 999_999, tzinfo=UTC)) == "2024-05-01T10:20:30Z"
    assert _rfc3339_micros(datetime(2024, 5, 1, 10, 20, 30, 123, tzinfo=UTC)) == "2024-05-01T10:20:30.000123Z"
    east = timezone(timedelta(hours=2))
    assert _rfc3339_seconds(datetime(2024, 1, 1, 1, 0, 0, tzinfo=east)) == "2023-12-31T23:00:00Z"
