"""The Typer application. Commands stay thin: parse flags, call a library function, print its report.

Heavy modules (cookiecutter, jinja2, ruamel.yaml, rich consoles, the manifest generator) are imported inside the
commands that need them, so `pyop --help` starts fast.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated

import typer
import typer.core

from pyop_scaffold import __version__
from pyop_scaffold.cli.apiserver import create_apiserver as create_apiserver_command
from pyop_scaffold.cli.clients import make_clients as make_clients_command
from pyop_scaffold.cli.flags import EditFlags, KubebuilderBoolFlags
from pyop_scaffold.cli.testserver import test_server_command
from pyop_scaffold.cli.usage import OneLineUsageCommand, OneLineUsageGroup
from pyop_scaffold.errors import PyopError

app = typer.Typer(
    name="pyop",
    help="Kubebuilder for Python: scaffold Kubernetes operators, generate their manifests, run them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    add_completion=True,
    cls=OneLineUsageGroup,
)
create_app = typer.Typer(
    help="Scaffold a Kubernetes API, webhook or aggregated API server.",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=OneLineUsageGroup,
)
make_app = typer.Typer(
    help="Generate files from the project's models and markers.",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=OneLineUsageGroup,
)
app.add_typer(create_app, name="create")
app.add_typer(make_app, name="make")

ProjectDir = Annotated[
    Path, typer.Option("--project-dir", "-C", help="The project folder (default: the current folder).")
]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="List the unchanged files too.")]


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"pyop {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", callback=_version_callback, is_eager=True)
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", envvar="PYOP_DEBUG", help="On an error, print its traceback before the one-line message."
        ),
    ] = False,
) -> None:
    """Kubebuilder for Python: scaffold Kubernetes operators, generate their manifests, run them."""
    _DEBUG.set(debug)


# `pyop --debug ...` or PYOP_DEBUG=1: errors print their tracebacks too (set by the root callback each run).
_DEBUG: ContextVar[bool] = ContextVar("pyop_debug", default=False)


@app.command(cls=KubebuilderBoolFlags)
def init(
    domain: Annotated[str, typer.Option(help="Domain of the API groups (groups are <group>.<domain>).")] = "my.domain",
    project_name: Annotated[str | None, typer.Option(help="Name of the project (default: the folder's name).")] = None,
    owner: Annotated[str, typer.Option(help="Owner named in the licence header.")] = "",
    license: Annotated[str, typer.Option(help="Licence header of generated files: apache2 or none.")] = "apache2",
    namespaced: Annotated[
        bool, typer.Option(help="Watch only WATCH_NAMESPACE and use Role/RoleBinding instead of cluster scope.")
    ] = False,
    multigroup: Annotated[bool, typer.Option(help="Lay out APIs as api/<group>/<version>.")] = False,
    kubernetes_version: Annotated[
        str | None,
        typer.Option(help="Kubernetes minor version (e.g. 1.36) of embedded built-in schemas and the test server."),
    ] = None,
    force: Annotated[bool, typer.Option(help="Scaffold into a non-empty folder, overwriting clashing files.")] = False,
    project_dir: ProjectDir = Path("."),
    verbose: Verbose = False,
) -> None:
    """Initialise a new operator project in the current folder."""
    from pyop_scaffold.commands.init import InitOptions, init_project

    options = InitOptions(
        domain=domain,
        project_name=project_name,
        owner=owner,
        license=license,
        namespaced=namespaced,
        multigroup=multigroup,
        kubernetes_version=kubernetes_version,
        force=force,
    )
    _run(lambda: init_project(project_dir, options), verbose=verbose)


@create_app.command("api", cls=KubebuilderBoolFlags)
def create_api(
    group: Annotated[str, typer.Option(help="API group, without the domain (e.g. crew).")],
    version: Annotated[str, typer.Option(help="API version (e.g. v1, v1alpha1, v2beta3).")],
    kind: Annotated[str, typer.Option(help="Kind, UpperCamelCase (e.g. Captain).")],
    plural: Annotated[
        str | None, typer.Option(help="Plural resource name (default: English plural of the kind).")
    ] = None,
    namespaced: Annotated[bool, typer.Option("--namespaced/--cluster-scoped", help="Scope of the resource.")] = True,
    resource: Annotated[bool, typer.Option(help="Scaffold the API model.")] = True,
    controller: Annotated[bool, typer.Option(help="Scaffold the controller.")] = True,
    external_api_path: Annotated[
        str | None,
        typer.Option(help="Import path of the models of a kind not defined here (e.g. certmanager_models.v1)."),
    ] = None,
    external_api_domain: Annotated[
        str | None, typer.Option(help="Domain of that external kind's group (the API group is <group>.<domain>).")
    ] = None,
    external_api_module: Annotated[
        str | None,
        typer.Option(help="Requirement installing them, added to pyproject.toml (e.g. certmanager-models>=1.2)."),
    ] = None,
    force: Annotated[bool, typer.Option(help="Overwrite files of an existing scaffold.")] = False,
    project_dir: ProjectDir = Path("."),
    verbose: Verbose = False,
) -> None:
    """Scaffold a Kubernetes API: model, controller, sample, RBAC helper roles and kustomize wiring."""
    from pyop_scaffold.commands.create_api import CreateAPIOptions
    from pyop_scaffold.commands.create_api import create_api as run_create_api
    from pyop_scaffold.project.foreign_kinds import ExternalFlags

    options = CreateAPIOptions(
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        namespaced=namespaced,
        resource=resource,
        controller=controller,
        force=force,
        external=ExternalFlags(external_api_path, external_api_domain, external_api_module),
    )
    _run(lambda: run_create_api(project_dir, options), verbose=verbose)


@create_app.command("webhook", cls=KubebuilderBoolFlags)
def create_webhook(
    group: Annotated[str, typer.Option(help="API group of the kind, without the domain (e.g. crew).")],
    version: Annotated[str, typer.Option(help="API version of the kind; with --conversion, the hub version.")],
    kind: Annotated[str, typer.Option(help="Kind: the project's, a built-in or an external one (e.g. Captain).")],
    plural: Annotated[str | None, typer.Option(help="Plural resource name (default: the kind's).")] = None,
    defaulting: Annotated[bool, typer.Option("--defaulting", help="Scaffold a defaulting (mutating) webhook.")] = False,
    programmatic_validation: Annotated[
        bool, typer.Option("--programmatic-validation", help="Scaffold a validating webhook.")
    ] = False,
    conversion: Annotated[
        bool, typer.Option("--conversion", help="Scaffold a conversion webhook (--version is the hub).")
    ] = False,
    spoke: Annotated[
        list[str] | None,
        typer.Option(
            metavar="VERSIONS",
            help="Versions converted to and from the hub, comma-separated (e.g. v2,v3); with --conversion.",
        ),
    ] = None,
    defaulting_path: Annotated[
        str | None, typer.Option(help="Custom path of the defaulting webhook (default: /mutate-<group>-<ver>-<kind>).")
    ] = None,
    validation_path: Annotated[
        str | None,
        typer.Option(help="Custom path of the validating webhook (default: /validate-<group>-<ver>-<kind>)."),
    ] = None,
    external_api_path: Annotated[
        str | None,
        typer.Option(help="Import path of the models of a kind not defined here (e.g. certmanager_models.v1)."),
    ] = None,
    external_api_domain: Annotated[
        str | None, typer.Option(help="Domain of that external kind's group (the API group is <group>.<domain>).")
    ] = None,
    external_api_module: Annotated[
        str | None,
        typer.Option(help="Requirement installing them, added to pyproject.toml (e.g. certmanager-models>=1.2)."),
    ] = None,
    force: Annotated[bool, typer.Option(help="Scaffold a webhook that exists again, overwriting its files.")] = False,
    certificates: Annotated[
        str | None,
        typer.Option(
            metavar="ISSUER",
            help="Who issues the serving certificates: cert-manager (default) or pyop (the manager, no cert-manager); "
            "the project's choice, shared with `create apiserver`.",
        ),
    ] = None,
    project_dir: ProjectDir = Path("."),
    verbose: Verbose = False,
) -> None:
    """Scaffold defaulting, validating or conversion webhooks for a kind, and wire them into config/default."""
    from pyop_scaffold.commands.create_webhook import CreateWebhookOptions
    from pyop_scaffold.commands.create_webhook import create_webhook as run_create_webhook
    from pyop_scaffold.project.foreign_kinds import ExternalFlags

    options = CreateWebhookOptions(
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        defaulting=defaulting,
        validation=programmatic_validation,
        conversion=conversion,
        spokes=tuple(spoke or ()),
        defaulting_path=defaulting_path,
        validation_path=validation_path,
        force=force,
        external=ExternalFlags(external_api_path, external_api_domain, external_api_module),
        certificates=certificates,
    )
    _run(lambda: run_create_webhook(project_dir, options), verbose=verbose)


create_app.command("apiserver", cls=KubebuilderBoolFlags)(create_apiserver_command)


@app.command(cls=EditFlags)
def edit(
    multigroup: Annotated[
        str | None,
        typer.Option(
            metavar="[=true|false]", help="Lay out new APIs as api/<group>/<version> (existing files are not moved)."
        ),
    ] = None,
    namespaced: Annotated[
        str | None,
        typer.Option(
            metavar="[=true|false]",
            help="Watch only WATCH_NAMESPACE and use Role/RoleBinding, as `pyop init --namespaced` makes it.",
        ),
    ] = None,
    license: Annotated[
        str | None, typer.Option(help="Licence header of files scaffolded from now on: apache2 or none.")
    ] = None,
    owner: Annotated[str | None, typer.Option(help="Owner named in the licence header of new files.")] = None,
    kubernetes_version: Annotated[
        str | None,
        typer.Option(help="Kubernetes minor version (e.g. 1.36) of embedded built-in schemas and the test server."),
    ] = None,
    plugins: Annotated[
        str | None,
        typer.Option(
            help="Add a plugin: helm (or helm/v2-alpha) writes dist/chart from config/default; run again to renew it."
        ),
    ] = None,
    certificates: Annotated[
        str | None,
        typer.Option(
            metavar="ISSUER",
            help="Who issues the serving certificates of webhooks and aggregated API servers: cert-manager or pyop "
            "(before the first `create webhook` or `create apiserver`).",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option(help="Replace files that cannot be edited in place with the template's version.")
    ] = False,
    project_dir: ProjectDir = Path("."),
    verbose: Verbose = False,
) -> None:
    """Change project-wide settings: multigroup layout, namespace scope, licence header, plugins, certificates."""
    from pyop_scaffold.cli.flags import parse_bool_flag
    from pyop_scaffold.commands.edit import EditOptions, edit_project

    def run() -> object:
        options = EditOptions(
            multigroup=parse_bool_flag("--multigroup", multigroup),
            namespaced=parse_bool_flag("--namespaced", namespaced),
            license=license,
            owner=owner,
            kubernetes_version=kubernetes_version,
            plugins=plugins,
            force=force,
            certificates=certificates,
        )
        return edit_project(project_dir, options)

    _run(run, verbose=verbose)


completion_app = typer.Typer(
    help="Print the shell completion script of pyop (Kubebuilder's `completion`).",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=OneLineUsageGroup,
)
app.add_typer(completion_app, name="completion")


def _completion(shell: str) -> None:
    from pyop_scaffold.cli.completion import completion_script

    typer.echo(completion_script(typer.main.get_command(app), shell), nl=False)


@completion_app.command("bash", cls=OneLineUsageCommand)
def completion_bash() -> None:
    """Bash completion: `source <(pyop completion bash)`, or save it in /etc/bash_completion.d/pyop."""
    _completion("bash")


@completion_app.command("zsh", cls=OneLineUsageCommand)
def completion_zsh() -> None:
    """Zsh completion: `source <(pyop completion zsh)`, or save it as _pyop in a folder of your $fpath."""
    _completion("zsh")


@completion_app.command("fish", cls=OneLineUsageCommand)
def completion_fish() -> None:
    """Fish completion: `pyop completion fish | source`, or save it in ~/.config/fish/completions/pyop.fish."""
    _completion("fish")


@completion_app.command("powershell", cls=OneLineUsageCommand)
def completion_powershell() -> None:
    """PowerShell completion: `pyop completion powershell | Out-String | Invoke-Expression`."""
    _completion("powershell")


class _ManifestFlags(KubebuilderBoolFlags):
    optional_value_flags = ("--check-compat",)  # a bare --check-compat compares with HEAD


@make_app.command("manifests", cls=_ManifestFlags)
def make_manifests(
    check: Annotated[
        bool, typer.Option(help="Also validate every sample under config/samples against its CRD.")
    ] = False,
    max_desc_len: Annotated[
        int | None,
        typer.Option(
            "--max-desc-len",
            min=0,
            help="Cut schema descriptions to N characters, 0 drops them (default: PROJECT manifests.maxDescLen).",
        ),
    ] = None,
    header_file: Annotated[
        Path | None,
        typer.Option(help="Comment header for generated YAML files (default: PROJECT manifests.headerFile)."),
    ] = None,
    check_compat: Annotated[
        str | None,
        typer.Option(
            "--check-compat",
            help="Refuse changes that break stored objects or clients, against the CRDs of a git ref (bare: HEAD), "
            "a file or a folder; nothing is written on a break.",
        ),
    ] = None,
    project_dir: ProjectDir = Path("."),
    verbose: Verbose = False,
) -> None:
    """Generate CRDs (config/crd/bases), RBAC roles (config/rbac/role.yaml) and webhook configurations
    (config/webhook/manifests.yaml) from models and markers."""
    from pyop_scaffold.commands.make_manifests import ManifestOptions
    from pyop_scaffold.commands.make_manifests import make_manifests as run_make

    compat = "HEAD" if check_compat == "true" else check_compat
    options = ManifestOptions(
        check_samples=check, max_description_length=max_desc_len, header_file=header_file, check_compat=compat
    )
    _run(lambda: run_make(project_dir, options), verbose=verbose)


make_app.command("clients", cls=KubebuilderBoolFlags)(make_clients_command)


@make_app.command("docs", cls=KubebuilderBoolFlags)
def make_docs(project_dir: ProjectDir = Path("."), verbose: Verbose = False) -> None:
    """Write the API reference (docs/api/: every kind and version, its fields, types, defaults and validation)
    from the models, and link it from README.md."""
    from pyop_scaffold.commands.make_docs import make_docs as run_make_docs

    _run(lambda: run_make_docs(project_dir), verbose=verbose)


@make_app.command("models", cls=KubebuilderBoolFlags)
def make_models(
    force: Annotated[bool, typer.Option(help="Overwrite files there that pyop did not generate.")] = False,
    project_dir: ProjectDir = Path("."),
    verbose: Verbose = False,
) -> None:
    """Generate the typed models of the built-in kinds for PROJECT's kubernetesVersion (<package>/k8s), when it
    is not the version pyop's own models (pyop.api.k8s) were generated from."""
    from pyop_scaffold.commands.make_models import ModelsOptions
    from pyop_scaffold.commands.make_models import make_models as run_make_models

    _run(lambda: run_make_models(project_dir, ModelsOptions(force=force)), verbose=verbose)


app.command("test-server", cls=KubebuilderBoolFlags)(test_server_command)


@make_app.command("lock", cls=KubebuilderBoolFlags)
def make_lock(
    platform: Annotated[
        str, typer.Option(help="Image platforms, comma-separated: linux/amd64, linux/arm64.")
    ] = "linux/amd64,linux/arm64",
    python_version: Annotated[
        str | None, typer.Option(help="The image's Python major.minor (default: the Dockerfile's base image).")
    ] = None,
    upgrade: Annotated[bool, typer.Option(help="Resolve afresh, not keeping the versions already locked.")] = False,
    force: Annotated[bool, typer.Option(help="Replace a requirements.lock that was edited by hand.")] = False,
    project_dir: ProjectDir = Path("."),
) -> None:
    """Lock the operator image's dependencies with their hashes (requirements.lock; pyop-kit's wheel in wheels/
    when it was not installed from an index)."""
    from pyop_scaffold.commands.lock import LockOptions
    from pyop_scaffold.commands.lock import make_lock as run_lock

    options = LockOptions(platforms=platform, python_version=python_version, upgrade=upgrade, force=force)
    _run(lambda: run_lock(project_dir, options))


def _run(command: object, *, verbose: bool = False) -> None:
    """Run a command function and print its report; user errors become one stderr line and exit code 2.

    A project's own files can fail pyop in ways no command checks for (a syntax error in a module it scans, bytes
    that are not UTF-8, a file-system error): those are one line too, naming the file, rather than a traceback.
    """
    from pyop_scaffold.cli.output import describe_file_error, print_error, print_report

    with _collector_paused():
        try:
            report = command()  # type: ignore[operator]
        except PyopError as exc:
            _print_traceback(exc)
            print_error(str(exc))
            raise typer.Exit(code=exc.exit_code) from None
        except (SyntaxError, UnicodeDecodeError, OSError) as exc:
            _print_traceback(exc)
            print_error(describe_file_error(exc))
            raise typer.Exit(code=2) from None
        print_report(report, verbose_unchanged=verbose)


def _print_traceback(exc: BaseException) -> None:
    """Under --debug, the tracebacks behind a one-line error: those of the user's code it reports (a failed
    import, a raising validator; several for several problems), else its own."""
    if not _DEBUG.get():
        return
    import traceback

    for cause in getattr(exc, "causes", None) or [exc]:
        traceback.print_exception(cause, file=sys.stderr)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a command runs: the process ends right after it.

    A command makes few garbage cycles, and `make manifests` builds a large heap of long-lived objects (the
    project's models and schemas), so a full collection midway walks it all to free next to nothing (~0.09 s for
    200 kinds). The collector is re-enabled afterwards for callers that go on (tests run commands in-process).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def main() -> None:
    try:
        app()
    finally:
        # Nothing is left to free when the command is done: skip the collector's walk of a large heap (the
        # imported project models of `make manifests`) at interpreter exit.
        gc.freeze()
