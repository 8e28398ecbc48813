"""Structured logs: every line written during a reconcile names the controller, the object and the reconcile."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from ctrl_helpers import Widget, eventually, manager_for, widget

from pyop.controller import Request, Result
from pyop.log import ConsoleFormatter, ContextFieldsFilter, JSONFormatter, configure_logging, log_values
from pyop.testing import TestAPIServer

user_log = logging.getLogger("tests.widget_reconciler")


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """Route all logging through pyop's JSON handler into a buffer (what `--log-format=json` sets up)."""
    stream = io.StringIO()
    root = logging.getLogger()
    level = root.level
    handler = configure_logging("json", "debug", stream=stream)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def records(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


async def test_reconcile_lines_carry_controller_object_and_reconcile_id(
    server: TestAPIServer, json_lines: io.StringIO
) -> None:
    attempts: dict[str, int] = {}

    async def reconcile(request: Request) -> Result:
        attempts[request.name] = attempts.get(request.name, 0) + 1
        user_log.info("looking at the widget", extra={"attempt": attempts[request.name]})
        if attempts[request.name] == 1:
            raise RuntimeError("first attempt fails")
        return Result()

    manager = manager_for(server)
    manager.controller_for(Widget).complete(reconcile)
    async with manager:
        await manager.client.create(widget("logged", namespace="default"))
        await eventually(lambda: attempts.get("logged", 0) == 2)
    lines = records(json_lines)
    mine = [line for line in lines if line["logger"] == "tests.widget_reconciler"]
    errors = [line for line in lines if line["msg"] == "Reconciler error"]
    assert len(mine) == 2 and len(errors) == 1
    for line in [*mine, *errors]:
        assert line["controller"] == "widget"
        assert line["controllerGroup"] == "ctrl.pyop.dev" and line["controllerKind"] == "Widget"
        assert line["namespace"] == "default" and line["name"] == "logged"
        assert isinstance(line["reconcileID"], str) and len(line["reconcileID"]) == 36
        assert line["ts"].endswith("Z") and line["level"] in ("info", "error")
    assert [line["attempt"] for line in mine] == [1, 2]
    assert mine[0]["reconcileID"] != mine[1]["reconcileID"]  # one id per reconcile
    assert errors[0]["reconcileID"] == mine[0]["reconcileID"]
    assert errors[0]["error"] == "RuntimeError: first attempt fails" and "Traceback" in errors[0]["stacktrace"]
    startup = next(line for line in lines if line["msg"] == "Starting workers")
    assert startup["controller"] == "widget" and startup["worker count"] == 1 and "reconcileID" not in startup


def test_console_format_and_nested_values() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ContextFieldsFilter())
    handler.setFormatter(ConsoleFormatter())
    logger = logging.getLogger("tests.console")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with log_values(controller="widget"), log_values(name="w1"):
            logger.warning("hello %s", "there", extra={"size": 3})
        logger.warning("outside")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    first, second = stream.getvalue().splitlines()
    timestamp, level, name, message, fields = first.split("\t")
    assert level == "WARNING" and name == "tests.console" and message == "hello there"
    assert json.loads(fields) == {"controller": "widget", "name": "w1", "size": 3}
    assert second.split("\t")[3] == "outside" and len(second.split("\t")) == 4


def test_json_formatter_without_context() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "plain %d", (1,), None)
    assert json.loads(JSONFormatter().format(record))["msg"] == "plain 1"


def test_configure_logging_rejects_unknown_settings() -> None:
    with pytest.raises(ValueError, match="console"):
        configure_logging("xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="level"):
        configure_logging("json", "loud")
