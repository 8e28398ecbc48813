"""`pyop create apiserver`: parse the flags, call `pyop_scaffold.commands.create_apiserver`, print its report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def create_apiserver(
    group: Annotated[str, typer.Option(help="API group, without the domain (e.g. wardle).")],
    version: Annotated[str, typer.Option(help="API version (e.g. v1alpha1).")],
    kind: Annotated[
        list[str],
        typer.Option(
            metavar="<str>", help="Kind, UpperCamelCase (e.g. Flunder); repeat for several, or run again to add more."
        ),
    ],
    namespaced: Annotated[
        bool, typer.Option("--namespaced/--cluster-scoped", help="Scope of the kinds given here.")
    ] = True,
    force: Annotated[bool, typer.Option(help="Scaffold kinds that exist again, overwriting their files.")] = False,
    certificates: Annotated[
        str | None,
        typer.Option(
            metavar="ISSUER",
            help="Who issues the serving certificate: cert-manager (default) or pyop (the server itself, no "
            "cert-manager); the project's choice, recorded in PROJECT.",
        ),
    ] = None,
    project_dir: Annotated[
        Path, typer.Option("--project-dir", "-C", help="The project folder (default: the current folder).")
    ] = Path("."),
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List the unchanged files too.")] = False,
) -> None:
    """Scaffold an aggregated API server serving the kinds (models, strategies, entry point, test, config/apiserver)."""
    from pyop_scaffold.cli.app import _run
    from pyop_scaffold.commands.create_apiserver import CreateAPIServerOptions
    from pyop_scaffold.commands.create_apiserver import create_apiserver as run_create_apiserver

    options = CreateAPIServerOptions(
        group=group,
        version=version,
        kinds=tuple(kind),
        namespaced=namespaced,
        force=force,
        certificates=certificates,
    )
    _run(lambda: run_create_apiserver(project_dir, options), verbose=verbose)
