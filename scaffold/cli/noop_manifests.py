"""`pyop make manifests` when nothing changed since the last run: answered before the CLI is imported.

Importing the Typer app, rich, pydantic and the generator costs several times what checking the stamp does (see
pyop_scaffold.manifests.incremental), and `make test`/`make run` call `make manifests` every time. So the console
script hands the command line here first. Only the plain forms are recognised (`--check`, `--max-desc-len N`,
`--header-file F`, `--project-dir D` or `-C D`, `--verbose`, with `=` or a separate value); anything else (help,
`--debug`, a typo) goes to the full CLI, which also handles every error. What is printed is what the full run
prints for the same outcome (a test compares them).
"""

from __future__ import annotations

import sys
from pathlib import Path

from pyop_scaffold.cli.terminal import styled_output

_VALUED = {
    "--max-desc-len": "max_desc_len",
    "--header-file": "header_file",
    "--project-dir": "project_dir",
    "-C": "project_dir",
}
_FLAGS = {"--check": "check", "--verbose": "verbose", "-v": "verbose"}


def try_noop(argv: list[str]) -> bool:
    """Print the no-op report and return True when `argv` is a `make manifests` with nothing to do."""
    if argv[:2] != ["make", "manifests"]:
        return False
    parsed = _parse(argv[2:])
    if parsed is None:
        return False
    from pyop_scaffold.manifests.incremental import RunOptions, up_to_date

    max_desc = parsed.get("max_desc_len")
    if max_desc is not None and not (max_desc.isdigit() and max_desc.isascii()):
        return False  # the full CLI explains the bad value
    options = RunOptions(
        check_samples=bool(parsed.get("check")),
        max_description_length=None if max_desc is None else int(max_desc),
        header_file=parsed.get("header_file"),
    )
    try:
        stamp = up_to_date(Path(parsed.get("project_dir") or "."), options)
    except Exception:  # noqa: BLE001 - any doubt at all: the full run decides
        return False
    if stamp is None:
        return False
    _print(list(stamp.outputs), list(stamp.notes), stamp.next_step, verbose=bool(parsed.get("verbose")))
    return True


def _parse(args: list[str]) -> dict[str, str] | None:
    parsed: dict[str, str] = {}
    position = 0
    while position < len(args):
        arg = args[position]
        name, equals, value = arg.partition("=")
        if arg in _FLAGS:
            parsed[_FLAGS[arg]] = "1"
        elif name in _VALUED and equals:
            parsed[_VALUED[name]] = value
        elif arg in _VALUED and position + 1 < len(args) and not args[position + 1].startswith("-"):
            position += 1
            parsed[_VALUED[arg]] = args[position]
        else:
            return None
        position += 1
    return parsed


def _print(paths: list[str], notes: list[str], next_step: str, *, verbose: bool) -> None:
    """The lines pyop_scaffold.cli.output.print_report writes for a report of unchanged files."""
    styled = styled_output(sys.stdout)
    lines: list[tuple[str, str, str, str]] = []  # before, style, styled text, after
    if verbose:
        lines.extend(("  ", "2", f"{'unchanged':>9}", f"  {path}") for path in paths)
    elif paths:
        lines.append(("  ", "2", f"{len(paths)} file(s) unchanged", " (--verbose lists them)"))
    lines.extend(("  ", "", "", note) for note in notes)
    if next_step:
        lines.append(("", "1", "Next:", f" {next_step}"))
    out = []
    for before, style, text, after in lines:
        shown = f"\x1b[{style}m{text}\x1b[0m" if styled and style and text else text
        out.append(f"{before}{shown}{after}\n")
    sys.stdout.write("".join(out))
    sys.stdout.flush()
