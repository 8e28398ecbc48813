"""The API servers' clock: a callable returning an aware datetime (tests pass fixed or stepping ones), by default
`utc_now`, the system clock. The registry formats the clock's second as metav1.Time (`format_time`, once per
second) and recognises `utc_now`, whose second it reads from `time.time()` instead (building a datetime and
asking its `timestamp()` cost more than the rest of a write's timestamp).
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    """The system clock in UTC (the API servers' default clock)."""
    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    """``moment`` as metav1.Time serializes it: RFC 3339 in UTC, whole seconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


__all__ = ["format_time", "utc_now"]
