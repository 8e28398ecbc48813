"""What commands print: a list of files with what happened to each, and the next step; errors in one line."""

from __future__ import annotations

import sys

from scaffold.commands.report import Report
from scaffold.render.changeset import Action

_STYLES = {
    Action.CREATE: ("created", "green"),
    Action.UPDATE: ("updated", "cyan"),
    Action.OVERWRITE: ("overwrote", "yellow"),
    Action.SKIP: ("skipped", "dim"),
    Action.UNCHANGED: ("unchanged", "dim"),
}


def print_report(report: Report, *, verbose_unchanged: bool = False) -> None:
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    for planned in report.files:
        if planned.action is Action.UNCHANGED and not verbose_unchanged:
            continue
        word, style = _STYLES[planned.action]
        console.print(f"  [{style}]{word:>9}[/{style}]  {planned.path}")
    unchanged = sum(1 for f in report.files if f.action is Action.UNCHANGED)
    if unchanged and not verbose_unchanged:
        console.print(f"  [dim]{unchanged} file(s) unchanged[/dim]")
    for note in report.notes:
        console.print(f"  {note}")
    if report.next_step:
        console.print(f"[bold]Next:[/bold] {report.next_step}")


def print_error(message: str) -> None:
    """One line on stderr; no traceback, no colour codes when stderr is not a terminal."""
    sys.stderr.write(f"Error: {message}\n")
