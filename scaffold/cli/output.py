"""What commands print: a list of files with what happened to each, and the next step; errors in one line.

On a terminal the action words are coloured with rich. Anywhere else (a pipe, a file, CI logs, tests) rich prints
the same text without styles, so it is written directly: no rich import and no markup parse per line, a tenth of
a second when `make manifests` reports a few hundred files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

from pyop_scaffold.cli.terminal import styled_output
from pyop_scaffold.commands.report import Report
from pyop_scaffold.render.changeset import Action

_STYLES = {
    Action.CREATE: ("created", "green"),
    Action.UPDATE: ("updated", "cyan"),
    Action.OVERWRITE: ("overwrote", "yellow"),
    Action.SKIP: ("skipped", "dim"),
    Action.UNCHANGED: ("unchanged", "dim"),
}


class _Line(NamedTuple):
    """One printed line: `before`, then `styled` in `style` (on a terminal), then `after`."""

    before: str
    style: str | None
    styled: str
    after: str

    def plain(self) -> str:
        return f"{self.before}{self.styled}{self.after}"


def print_report(report: Report, *, verbose_unchanged: bool = False) -> None:
    lines = _report_lines(report, verbose_unchanged)
    if styled_output(sys.stdout):
        _print_styled(lines)
    else:
        sys.stdout.write("".join(f"{line.plain()}\n" for line in lines))


def _report_lines(report: Report, verbose_unchanged: bool) -> list[_Line]:
    lines: list[_Line] = []
    folded: dict[tuple[str, Action], int] = {}
    for planned in report.files:
        if planned.action is Action.UNCHANGED and not verbose_unchanged:
            continue
        folder = next((f for f in report.collapsed if planned.path.startswith(f + "/")), None)
        if folder is not None and planned.action is not Action.UNCHANGED:
            folded[(folder, planned.action)] = folded.get((folder, planned.action), 0) + 1
            continue
        word, style = _STYLES[planned.action]
        lines.append(_Line("  ", style, f"{word:>9}", f"  {planned.path}"))
    for (folder, action), count in folded.items():
        word, style = _STYLES[action]
        lines.append(_Line("  ", style, f"{word:>9}", f"  {folder}/ ({count} generated files)"))
    unchanged = sum(1 for f in report.files if f.action is Action.UNCHANGED)
    if unchanged and not verbose_unchanged:
        lines.append(_Line("  ", "dim", f"{unchanged} file(s) unchanged", " (--verbose lists them)"))
    lines.extend(_Line("  ", None, "", note) for note in report.notes)
    if report.next_step:
        lines.append(_Line("", "bold", "Next:", f" {report.next_step}"))
    return lines


def _print_styled(lines: list[_Line]) -> None:
    from rich.console import Console
    from rich.text import Text

    # Text objects, not markup: a path or note is printed as written, brackets and colons included.
    console = Console(highlight=False, soft_wrap=True, emoji=False)
    for line in lines:
        console.print(Text.assemble(line.before, (line.styled, line.style or ""), line.after))


def print_error(message: str) -> None:
    """One line on stderr; no traceback, no colour codes when stderr is not a terminal."""
    sys.stderr.write(f"Error: {message}\n")


def describe_file_error(exc: SyntaxError | UnicodeDecodeError | OSError) -> str:
    """One line for an error that a project's own file caused (a command's last resort: each command checks what
    it knows of first), naming the file and, for Python, the line."""
    if isinstance(exc, SyntaxError):
        where = f"{_shown(exc.filename)}:{exc.lineno}" if exc.filename and exc.lineno else _shown(exc.filename)
        return f"{where or 'a Python file'}: not valid Python: {exc.msg}"
    if isinstance(exc, UnicodeDecodeError):
        return f"a project file is not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8"
    target = _shown(exc.filename) if exc.filename else "a project file"
    return f"cannot use {target}: {exc.strerror or exc}"


def _shown(filename: object) -> str:
    """A path as the user would type it: relative to the current folder when it is under it."""
    if not filename:
        return ""
    path = Path(str(filename))
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return str(path)
