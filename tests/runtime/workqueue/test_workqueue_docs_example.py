"""The controller loop in docs/runtime/workqueue.md runs and prints what the page says it prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "runtime" / "workqueue.md"


def test_controller_loop_example_runs_as_documented(capsys: pytest.CaptureFixture[str]) -> None:
    text = DOC.read_text()
    match = re.search(r"<!-- example: controller-loop -->\n```python\n(.*?)```\n\nIt prints `(.*?)`", text, re.S)
    assert match, "the controller-loop example or its stated output is missing from the docs page"
    code, stated_output = match.groups()
    exec(compile(code, str(DOC), "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out.strip() == stated_output
