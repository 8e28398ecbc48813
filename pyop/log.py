"""Structured logging for operators: context fields on every line, console or JSON output.

Controllers run many reconciles at once in one event loop, so a line such as "created Deployment" is useless
unless it says *which* object's reconcile wrote it. controller-runtime threads a logger with those values
through `context.Context`; Python has `contextvars`, which asyncio copies into every task. The controller sets
`controller`, `controllerGroup`, `controllerKind`, `namespace`, `name` and `reconcileID` for the duration of a
reconcile (see `log_values`), and `ContextFieldsFilter` copies them onto each `logging.LogRecord`. Reconcilers
keep using the standard `logging.getLogger(__name__)`; nothing has to be passed around.

Two formats, as controller-runtime's zap options: `console` (development: one readable line, fields as JSON
at the end) and `json` (production: one JSON object per line, for log collectors). Call `configure_logging`
once at start-up (the manager does when `ManagerOptions.log_format` is set).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import traceback
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

__all__ = [
    "ConsoleFormatter",
    "ContextFieldsFilter",
    "JSONFormatter",
    "LogFormat",
    "configure_logging",
    "current_log_values",
    "log_values",
]

LogFormat = Literal["console", "json"]

_EMPTY: Mapping[str, Any] = {}
_log_context: ContextVar[Mapping[str, Any]] = ContextVar("pyop_log_context", default=_EMPTY)

# Attributes every LogRecord has; anything else on a record came from `extra=` and is a field to print.
_RECORD_ATTRIBUTES = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys() | {"message", "asctime", "taskName", "pyop_fields"}
)


def current_log_values() -> Mapping[str, Any]:
    """The context fields in force in the current task (empty outside a reconcile)."""
    return _log_context.get()


@contextlib.contextmanager
def log_values(**fields: Any) -> Iterator[None]:
    """Add `fields` to every log line written inside the block (and in tasks started inside it).

    Nested blocks add to the outer fields; leaving a block restores what was there before.
    """
    token = _log_context.set({**_log_context.get(), **fields})
    try:
        yield
    finally:
        _log_context.reset(token)


def set_log_values(fields: Mapping[str, Any]) -> Any:
    """Replace the context fields; returns a token for `reset_log_values` (the controller's hot path)."""
    return _log_context.set(fields)


def reset_log_values(token: Any) -> None:
    _log_context.reset(token)


class ContextFieldsFilter(logging.Filter):
    """Attaches the current context fields to each record (as `record.pyop_fields`); never drops a record.

    Installed on the handler, so it runs in the task that logs, where the context variable has its value.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "pyop_fields"):
            record.pyop_fields = _log_context.get()
        return True


def _fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """Context fields, then `extra=` fields of the call (which win on a clash)."""
    fields = dict(getattr(record, "pyop_fields", None) or _EMPTY)
    for key, value in vars(record).items():
        if key not in _RECORD_ATTRIBUTES:
            fields[key] = value
    return fields


def _timestamp(record: logging.LogRecord) -> str:
    moment = datetime.fromtimestamp(record.created, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(record.msecs):03d}Z"


class JSONFormatter(logging.Formatter):
    """One JSON object per line with zap's production keys: level, ts, logger, msg, fields, error, stacktrace."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "level": record.levelname.lower(),
            "ts": _timestamp(record),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(_fields_of(record))
        if record.exc_info and record.exc_info[1] is not None:
            entry["error"] = f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
            entry["stacktrace"] = "".join(traceback.format_exception(*record.exc_info))
        elif record.exc_text:
            entry["stacktrace"] = record.exc_text
        return json.dumps(entry, default=str, ensure_ascii=False)


class ConsoleFormatter(logging.Formatter):
    """zap's development layout: `ts  LEVEL  logger  message  {"field": ...}`, traceback below."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_timestamp(record)}\t{record.levelname}\t{record.name}\t{record.getMessage()}"
        fields = _fields_of(record)
        if fields:
            line += "\t" + json.dumps(fields, default=str, ensure_ascii=False)
        if record.exc_info:
            line += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
        return line


_HANDLER_NAME = "pyop"


def configure_logging(
    log_format: LogFormat = "console", level: str | int = "info", stream: TextIO | None = None
) -> logging.Handler:
    """Send all logging to `stream` (stderr) in `log_format`, at `level`; replaces an earlier pyop handler.

    Returns the handler. Other handlers on the root logger are left alone.
    """
    if log_format not in ("console", "json"):
        raise ValueError(f"log format must be 'console' or 'json', not {log_format!r}")
    numeric = level if isinstance(level, int) else logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    root = logging.getLogger()
    for existing in list(root.handlers):
        if existing.get_name() == _HANDLER_NAME:
            root.removeHandler(existing)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.addFilter(ContextFieldsFilter())
    handler.setFormatter(JSONFormatter() if log_format == "json" else ConsoleFormatter())
    root.addHandler(handler)
    root.setLevel(numeric)
    return handler
