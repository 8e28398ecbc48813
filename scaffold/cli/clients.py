"""`pyop make clients`: parse the flags, call `pyop_scaffold.commands.make_clients`, print its report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def make_clients(
    package: Annotated[
        str | None,
        typer.Option(
            help="Dotted module path of the generated package, inside the project's package (default: PROJECT "
            "clients.package, else <package>.generated); recorded in PROJECT."
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Overwrite files there that pyop did not generate.")] = False,
    project_dir: Annotated[
        Path, typer.Option("--project-dir", "-C", help="The project folder (default: the current folder).")
    ] = Path("."),
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List the unchanged files too.")] = False,
) -> None:
    """Generate the typed clientset, informers, listers and fakes of the kinds tagged +genclient."""
    from pyop_scaffold.cli.app import _run
    from pyop_scaffold.commands.make_clients import ClientsOptions
    from pyop_scaffold.commands.make_clients import make_clients as run_make

    options = ClientsOptions(package=package, force=force)
    _run(lambda: run_make(project_dir, options), verbose=verbose)
