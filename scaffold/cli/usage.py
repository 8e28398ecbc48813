"""Click's usage errors (a missing or unknown option, a value that is not an integer) as the one line every other
pyop error is, instead of click's three: the usage line, a `--help` hint and the message.

Typer vendors its own click, so the error classes are told apart by what they carry (an exit code of 2 and a
message), not imported from a private module. `pyop create` with no subcommand still prints the help.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import typer
import typer.core


class OneLineUsageErrors:
    """Mixed into typer's command and group classes: parse errors become one line and exit code 2."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        with _one_line(ctx):
            return super().parse_args(ctx, args)  # type: ignore[misc, no-any-return]

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        with _one_line(ctx):
            return super().resolve_command(ctx, args)  # type: ignore[misc]


@contextlib.contextmanager
def _one_line(ctx: Any) -> Iterator[None]:
    try:
        yield
    except typer.TyperException as exc:
        if not is_usage_error(exc):
            raise
        from pyop_scaffold.cli.output import print_error

        message = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
        print_error(f"{message} (see `{ctx.command_path} --help`)")
        raise typer.Exit(code=2) from None


def is_usage_error(exc: BaseException) -> bool:
    """A click usage error (exit code 2, a message), but not "no arguments: here is the help"."""
    return (
        isinstance(exc, typer.TyperException)
        and getattr(exc, "exit_code", None) == 2
        and hasattr(exc, "format_message")
        and type(exc).__name__ != "NoArgsIsHelpError"
    )


class OneLineUsageCommand(OneLineUsageErrors, typer.core.TyperCommand):
    """A pyop command."""


class OneLineUsageGroup(OneLineUsageErrors, typer.core.TyperGroup):
    """`pyop`, `pyop create`, `pyop make`, `pyop completion`: an unknown subcommand is one line too."""
