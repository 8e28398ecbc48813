"""`pyop test-server`: parse the flags, call `pyop_scaffold.commands.test_server`, stay in the foreground."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def test_server_command(
    crds: Annotated[
        list[Path] | None,
        typer.Option(
            "--crds",
            metavar="DIR",
            help="A folder of CRD YAML files (or one file) to install; repeatable (default in a project: "
            "config/crd/bases).",
        ),
    ] = None,
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            help="Where to write the kubeconfig (default: bin/test-server.kubeconfig in a project, else "
            "./test-server.kubeconfig); removed when the server stops."
        ),
    ] = None,
    port: Annotated[int, typer.Option(help="The port on 127.0.0.1 (default: a free one).")] = 0,
    http: Annotated[
        bool, typer.Option("--http", help="Serve plain http instead of HTTPS (kubectl needs HTTPS).")
    ] = False,
    force: Annotated[bool, typer.Option(help="Replace a kubeconfig file this command did not write.")] = False,
    advertise_address: Annotated[
        str | None,
        typer.Option(
            "--advertise-address",
            metavar="IP",
            help="The address the default/kubernetes Endpoints hold, as kube-apiserver's flag (default: this "
            "host's address on its default route).",
        ),
    ] = None,
    project_dir: Annotated[
        Path, typer.Option("--project-dir", "-C", help="The project folder (default: the current folder).")
    ] = Path("."),
) -> None:
    """Run pyop's test API server in the foreground, with the project's CRDs, for kubectl and `make run`."""
    from pyop_scaffold.cli.output import print_error
    from pyop_scaffold.commands.test_server import resolve_options, serve
    from pyop_scaffold.errors import PyopError

    try:
        options = resolve_options(
            project_dir,
            crds=crds or [],
            kubeconfig=kubeconfig,
            port=port,
            http=http,
            force=force,
            advertise_address=advertise_address,
        )
        serve(options, echo=lambda text: typer.echo(text))
    except PyopError as exc:
        print_error(str(exc))
        raise typer.Exit(code=exc.exit_code) from None
