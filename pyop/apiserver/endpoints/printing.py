"""The generic parts of Table output (meta.k8s.io/v1): column definitions, rows, and the age of an object as
kube-apiserver prints it (`duration.HumanDuration`), shared by every kind's printer.

A kind's printer is its strategy's ``printer`` (columns and a row function); one that has none gets Name and Age
(`default_row`). The built-in kinds' printers are the test API server's (`pyop.testing.builtins.printers`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

Column = tuple[str, str, str, str, int]  # name, type, format, description, priority
Row = Callable[[dict[str, Any], datetime], list[Any]]

NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may "
    "allow a client to request the generation of an appropriate name automatically. Name is primarily intended "
    "for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
AGE_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. "
    "It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
NAME: Column = ("Name", "string", "name", NAME_DOC, 0)
AGE: Column = ("Age", "string", "", AGE_DOC, 0)


def human_duration(seconds_total: float) -> str:
    """`duration.HumanDuration`: "45s", "3m20s", "15m", "5h10m", "3d4h", "2y30d"."""
    seconds = int(seconds_total)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        rest = seconds % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def since(value: Any, now: datetime) -> str:
    """`translateTimestampSince`: the age of a timestamp, ``<unknown>`` without one."""
    moment = parse_time(value)
    return "<unknown>" if moment is None else human_duration((now - moment).total_seconds())


def age(obj: Mapping[str, Any], now: datetime) -> str:
    return since((obj.get("metadata") or {}).get("creationTimestamp"), now)


def default_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [obj["metadata"]["name"], age(obj, now)]


CREATED_AT: Column = ("Created At", "date", "", AGE_DOC, 0)


def created_at_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    """kube-apiserver's DefaultTableConvertor (CRDs have no printer): the creation time as RFC 3339."""
    return [obj["metadata"]["name"], (obj.get("metadata") or {}).get("creationTimestamp")]


__all__ = [
    "AGE",
    "AGE_DOC",
    "CREATED_AT",
    "NAME",
    "NAME_DOC",
    "Column",
    "Row",
    "age",
    "created_at_row",
    "default_row",
    "human_duration",
    "parse_time",
    "since",
]
