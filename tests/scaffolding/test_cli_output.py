"""The command report: the same text with or without a terminal, styled only where rich would style it."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from pyop_scaffold.cli import output
from pyop_scaffold.commands.report import Report
from pyop_scaffold.render.changeset import Action, PlannedFile

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _report() -> Report:
    files = [PlannedFile(path=f"config/file{n}.yaml", content=b"", action=action) for n, action in enumerate(Action)]
    files.append(PlannedFile(path="config/[bold]odd[/bold] :smile: name.yaml", content=b"", action=Action.CREATE))
    return Report(files=files, notes=["checked 2 sample(s): all valid", "a [/note] with brackets"], next_step="go")


def _printed(print_lines: object, *args: object) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        print_lines(*args)  # type: ignore[operator]
    return buffer.getvalue()


@pytest.fixture
def no_colour_overrides(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    return monkeypatch


@pytest.mark.parametrize("verbose", [False, True])
def test_plain_text_is_what_rich_prints_off_a_terminal(no_colour_overrides: pytest.MonkeyPatch, verbose: bool) -> None:
    plain = _printed(lambda: output.print_report(_report(), verbose_unchanged=verbose))
    rich_text = _printed(output._print_styled, output._report_lines(_report(), verbose))
    assert "\x1b" not in rich_text
    assert plain == rich_text


def test_report_text(no_colour_overrides: pytest.MonkeyPatch) -> None:
    text = _printed(output.print_report, _report())
    assert text.splitlines() == [
        "    created  config/file0.yaml",
        "    updated  config/file1.yaml",
        "  overwrote  config/file2.yaml",
        "    skipped  config/file3.yaml",
        "    created  config/[bold]odd[/bold] :smile: name.yaml",
        "  1 file(s) unchanged (--verbose lists them)",
        "  checked 2 sample(s): all valid",
        "  a [/note] with brackets",
        "Next: go",
    ]


def test_verbose_report_lists_the_unchanged_files(no_colour_overrides: pytest.MonkeyPatch) -> None:
    text = _printed(lambda: output.print_report(_report(), verbose_unchanged=True))
    assert "  unchanged  config/file4.yaml" in text.splitlines()
    assert "file(s) unchanged" not in text


def test_forced_colour_styles_the_same_text(no_colour_overrides: pytest.MonkeyPatch) -> None:
    plain = _printed(output.print_report, _report())
    no_colour_overrides.setenv("FORCE_COLOR", "1")
    styled = _printed(output.print_report, _report())
    assert "\x1b[32m" in styled  # green "created"
    assert _ANSI.sub("", styled) == plain


@pytest.mark.parametrize(
    ("environment", "styled"),
    [
        ({}, False),
        ({"FORCE_COLOR": "1"}, True),
        ({"FORCE_COLOR": ""}, False),
        ({"TTY_COMPATIBLE": "1"}, True),
        ({"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, False),
    ],
)
def test_styling_follows_richs_terminal_test(
    no_colour_overrides: pytest.MonkeyPatch, environment: dict[str, str], styled: bool
) -> None:
    for name, value in environment.items():
        no_colour_overrides.setenv(name, value)
    assert output.styled_output(io.StringIO()) is styled


def test_a_terminal_is_styled(no_colour_overrides: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert output.styled_output(Terminal())
