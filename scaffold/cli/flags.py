"""Boolean flags spelt as Kubebuilder's (Go pflag): `--resource`, `--resource=true`, `--resource=false`.

Typer's boolean options take no value (`--resource=false` is "does not take a value"), and its parser has no option
whose value may be left out. So the arguments are rewritten before click parses them: `--flag=false` becomes the
flag's off form (`--no-resource`, `--cluster-scoped`), `--flag=true` the flag, and for the options of `pyop edit`,
which are left unchanged when not given, a bare `--flag` becomes `--flag=true` for `parse_bool_flag` to read.
Values are read as Go's strconv.ParseBool reads them; any other value is a one-line error with exit code 2.
"""

from __future__ import annotations

from typing import Any

import typer

from pyop_scaffold.cli.usage import OneLineUsageCommand
from pyop_scaffold.errors import UsageError

# Go's strconv.ParseBool, which Kubebuilder's `--flag=value` booleans go through.
_TRUE = ("1", "t", "T", "true", "TRUE", "True")
_FALSE = ("0", "f", "F", "false", "FALSE", "False")


def parse_bool_flag(flag: str, value: str | None) -> bool | None:
    """`--flag` is true, `--flag=false` false, as in Kubebuilder; anything else names the value and the choices."""
    if value is None:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise UsageError(f"invalid {flag} value {value!r}: must be true or false")


class KubebuilderBoolFlags(OneLineUsageCommand):
    """A command whose boolean flags also take `=true`/`=false` (and whose usage errors are one line);
    `optional_value_flags` are string options that a bare flag sets to "true" (tri-state settings, None when not
    given)."""

    optional_value_flags: tuple[str, ...] = ()

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer's own (vendored) click Context
        try:
            args = rewrite_bool_flags(self.params, args, self.optional_value_flags)
        except UsageError as exc:
            from pyop_scaffold.cli.output import print_error

            print_error(str(exc))
            raise typer.Exit(code=exc.exit_code) from None
        return super().parse_args(ctx, args)


class EditFlags(KubebuilderBoolFlags):
    optional_value_flags = ("--multigroup", "--namespaced")


def rewrite_bool_flags(params: list[Any], args: list[str], optional_value_flags: tuple[str, ...] = ()) -> list[str]:
    """The arguments with every `--flag=value` of a boolean flag in `params` turned into a form click parses."""
    on_off: dict[str, tuple[str, str | None]] = {}
    takes_value: set[str] = set()
    for param in params:
        if getattr(param, "param_type_name", "") != "option":  # arguments take no flags
            continue
        if param.is_flag and param.is_bool_flag:
            off = param.secondary_opts[0] if param.secondary_opts else None
            for name in param.opts:
                if name.startswith("--"):
                    on_off[name] = (name, off)
        elif not param.is_flag:
            takes_value.update(param.opts)
    result: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            result.extend(args[index - 1 :])
            break
        if arg in takes_value and arg not in optional_value_flags:
            result.append(arg)
            if index < len(args):  # the option's value, whatever it looks like
                result.append(args[index])
                index += 1
            continue
        if arg in optional_value_flags:
            result.append(f"{arg}=true")
            continue
        name, sep, value = arg.partition("=")
        if not sep or name not in on_off:
            result.append(arg)
            continue
        on, off = on_off[name]
        if parse_bool_flag(name, value):
            result.append(on)
        elif off is not None:
            result.append(off)
        else:  # a flag with no off form is off unless given: Go's last-wins, so drop it where it came before
            result = [a for a in result if a != on]
    return result
