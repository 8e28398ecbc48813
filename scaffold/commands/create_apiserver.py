"""`pyop create apiserver`: an aggregated API server (its kinds' models and strategies, entry point, test and
config/apiserver) in an existing project; run again to add kinds and group versions.

The server is built on `pyop.apiserver` (APIGroupVersion, Resource, Strategy, run). What is written follows the
rest of pyop: every file is planned in a ChangeSet and written all or nothing; files of a kind already scaffolded
are kept (only --force rewrites them); shared modules and kustomizations gain the new kind at their insertion
points; PROJECT records each kind as a resource with `apiserver:` settings (served by the aggregated server, not a
CRD).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyop_scaffold.commands import apiserver_config, apiserver_versions, project_files, webhook_certificates
from pyop_scaffold.commands.create_webhook import PROJECT_LINE_LENGTH
from pyop_scaffold.commands.dependencies import add_dependency
from pyop_scaffold.commands.headers import BOILERPLATE_FILE
from pyop_scaffold.commands.project_files import read_file_text, read_text
from pyop_scaffold.commands.report import Report
from pyop_scaffold.edit.insertion import insert_at_marker
from pyop_scaffold.edit.python_source import add_import
from pyop_scaffold.errors import UsageError
from pyop_scaffold.project.apiserver_layout import APIServerLayout
from pyop_scaffold.project.config import (
    PROJECT_FILE,
    APIServerSettings,
    Project,
    ResourceEntry,
    dump_project,
    load_project,
)
from pyop_scaffold.project.names import snake_case, validate_group, validate_kind, validate_version
from pyop_scaffold.render.changeset import ChangeSet, IfExists
from pyop_scaffold.render.lock import holding_project_lock
from pyop_scaffold.render.templates import render_template

HELPER_ROLES = ("admin", "editor", "viewer")
# Names the server's scaffolds import beside a kind (pyop.apiserver's, the test's): a kind of the same name would
# shadow them. pyop.api's names are in pyop_scaffold.project.names.RESERVED_KINDS, checked by validate_kind.
RESERVED_KINDS = frozenset({"APIGroupVersion", "Client", "FieldError", "ForbiddenError", "Strategy", "TableColumn"})
GROUP_VERSIONS_MARKER = "apiserver-groupversions"
RESOURCES_MARKER = "apiserver-resources"


def runtime_requirement() -> str:
    """What the project's image must install to run the server: pyop-kit's `apiserver` extra, at the version
    `pyop init` pinned the project to (the registry's YAML and greenlet, the models' built-in schemas, CEL)."""
    from pyop_scaffold import __version__

    return f"pyop-kit[apiserver]~={__version__}"


@dataclass(frozen=True)
class CreateAPIServerOptions:
    group: str
    version: str
    kinds: tuple[str, ...]
    namespaced: bool = True
    force: bool = False
    certificates: str | None = None  # cert-manager or pyop (webhook_certificates.py); None: the project's


@holding_project_lock
def create_apiserver(root: Path, options: CreateAPIServerOptions) -> Report:
    root = root.resolve()
    group = validate_group(options.group)
    version = validate_version(options.version)
    kinds = _validate_kinds(options.kinds)
    project = load_project(root)
    for kind in kinds:
        check_not_crd(project, group, version, kind)
        _check_kind_unique(project, group, kind)
    certificates = webhook_certificates.choose(project, options.certificates)  # recorded in PROJECT

    from pyop.api.naming import default_plural

    changes = ChangeSet(root, force=options.force)
    notes: list[str] = []
    new_kinds: list[str] = []
    for kind in kinds:
        layout = APIServerLayout(project, group, version, kind, default_plural(kind))
        served = apiserver_versions.served_versions(project, group, kind)  # another version: a spoke of its hub
        existing = project.find(group, version, kind)
        if existing is not None and existing.apiserver is not None and not options.force:
            notes.append(f"{group}/{version}, Kind={kind} is already served: kept its files (--force rewrites them)")
            continue
        rendered = render_template("apiserver", _context(root, project, layout, options.namespaced, certificates))
        _plan_package(changes, layout, rendered)
        _plan_kind(changes, root, project, layout, rendered, options.namespaced)
        notes += apiserver_versions.plan_spoke(changes, project, layout, served)
        _record(project, layout, options.namespaced)
        new_kinds.append(kind)
    if new_kinds:
        first = APIServerLayout(project, group, version, kinds[0], default_plural(kinds[0]))
        rendered = render_template("apiserver", _context(root, project, first, options.namespaced, certificates))
        notes += apiserver_config.plan_config(changes, project, first, rendered, certificates)
        notes += add_dependency(changes, runtime_requirement(), why="the aggregated API server's run-time extra")
        changes.update_file(PROJECT_FILE, dump_project(project))
    report = Report(files=project_files.apply(changes), notes=notes)
    last = APIServerLayout(project, group, version, kinds[-1], default_plural(kinds[-1]))
    report.next_step = (
        f"fill in the hooks of {last.strategy_file} and the model in {last.types_file}, then run: make test"
    )
    return report


def _validate_kinds(raw: tuple[str, ...]) -> list[str]:
    if not raw:
        raise UsageError("no kind given: pass --kind at least once (e.g. --kind Flunder)")
    kinds: list[str] = []
    for kind in raw:
        validate_kind(kind)
        if kind in RESERVED_KINDS:
            raise UsageError(
                f"invalid kind {kind!r}: the aggregated server's code imports pyop's own {kind} beside it; "
                f"choose another name (reserved: {', '.join(sorted(RESERVED_KINDS))})"
            )
        if kind in kinds:
            raise UsageError(f"invalid --kind {kind!r}: given twice")
        clash = next((k for k in kinds if snake_case(k) == snake_case(kind) or k.lower() == kind.lower()), None)
        if clash is not None:
            raise UsageError(
                f"invalid --kind {kind!r}: it has the same singular name and files as --kind {clash!r}; "
                "choose another name"
            )
        kinds.append(kind)
    return kinds


def check_not_crd(project: Project, group: str, version: str, kind: str) -> None:
    """A group version is served either by kube-apiserver (CRDs) or by the aggregated server: its APIService takes
    every request under /apis/<group>/<version>, so a CRD kind there would no longer be reachable, and a kind
    whose other versions are CRDs would be split between two servers."""
    for entry in project.resources:
        if entry.api is None or entry.group != group:
            continue
        if entry.same_gvk(group, version, kind):
            raise UsageError(
                f"invalid kind {kind!r}: {group}/{version}, Kind={kind} is already a CRD of this project "
                "(`pyop create api`); an aggregated server cannot serve it too"
            )
        if entry.version == version:
            raise UsageError(
                f"invalid version {version!r}: {group}/{version} has the CRD kind {entry.kind}, and the aggregated "
                "server's APIService would take the whole group version from kube-apiserver; use another version "
                "or group"
            )
        if entry.kind == kind:
            raise UsageError(
                f"invalid kind {kind!r}: {group}/{entry.version}, Kind={kind} is a CRD of this project; a kind is "
                "served either by CRDs or by the aggregated server, not both"
            )


def check_not_aggregated(project: Project, group: str, version: str, kind: str) -> None:
    """For `pyop create api`: a CRD cannot join a group version (or a kind) the aggregated server serves."""
    for entry in project.resources:
        if entry.apiserver is None or entry.group != group:
            continue
        if entry.version == version or entry.kind == kind:
            raise UsageError(
                f"invalid kind {kind!r}: {group}/{entry.version}, Kind={entry.kind} is served by the project's "
                f"aggregated API server (`pyop create apiserver`), whose APIService takes {group}/{entry.version} "
                "from kube-apiserver; `create api` scaffolds no CRD or controller there (use another group or version)"
            )


def _check_kind_unique(project: Project, group: str, kind: str) -> None:
    """Two kinds whose singular names match would share files (`<kind>_types.py`, the sample, the roles)."""
    for other in project.resources:
        if other.group == group and other.kind != kind and snake_case(other.kind) == snake_case(kind):
            raise UsageError(
                f"invalid kind {kind!r}: kind {group}/{other.kind} has the same singular name and files "
                f"({snake_case(kind)}_types.py); choose another name"
            )
        if other.group == group and other.kind != kind and other.kind.lower() == kind.lower():
            raise UsageError(
                f"invalid kind {kind!r}: kind {group}/{other.kind} has the same singular name {kind.lower()!r}, "
                "which names its sample and roles; choose another name"
            )


def _context(
    root: Path, project: Project, layout: APIServerLayout, namespaced: bool, certificates: str
) -> dict[str, Any]:
    return {
        "certificates": certificates,
        "project_name": project.project_name,
        "package": project.package,
        "license_header": read_file_text(root, BOILERPLATE_FILE) or "",
        "group": layout.group,
        "qualified_group": layout.qualified_group,
        "group_module": layout.group_dir.rpartition("/")[2],
        "version": layout.version,
        "kind": layout.kind,
        "kind_lower": layout.kind.lower(),
        "kind_module": layout.kind_module,
        "plural": layout.plural,
        "namespaced": namespaced,
        "types_module": layout.types_module,
        "strategy_module": layout.strategy_module,
        "group_version_module": layout.group_version_module,
        "group_version_alias": layout.group_version_alias,
        "apiservice_name": layout.apiservice_name,
        "types_import": from_import(layout.types_module, layout.kind),
        "strategy_import": from_import(layout.strategy_module, f"{layout.kind}Strategy"),
        "group_version_import": from_import(
            layout.group_version_module, f"API_GROUP_VERSION as {layout.group_version_alias}"
        ),
    }


def from_import(module: str, name: str) -> str:
    """`from module import name` on one line, or wrapped as ruff's isort writes it when too long for the project."""
    line = f"from {module} import {name}"
    if len(line) <= PROJECT_LINE_LENGTH:
        return line
    return f"from {module} import (\n    {name},\n)"


def _plan_package(changes: ChangeSet, layout: APIServerLayout, rendered: dict[str, bytes]) -> None:
    """The server package, its group and version packages; a new kind or group version joins the existing ones at
    their insertion points (the user's code in them stays)."""
    package = layout.project.package
    init = f"{layout.package_dir}/__init__.py"
    current = read_text(changes, init)
    if current is None:
        changes.add_file(init, rendered["package_init.py"])
    else:
        statement = from_import(layout.group_version_module, f"API_GROUP_VERSION as {layout.group_version_alias}")
        text = current if statement in current else add_import(current, statement, source=init, first_party=package)
        text = insert_at_marker(text, GROUP_VERSIONS_MARKER, f"{layout.group_version_alias},", source=init)
        changes.update_file(init, text)
    for path, template in (
        (f"{layout.package_dir}/__main__.py", "main.py"),
        (f"{layout.group_dir}/__init__.py", "group_init.py"),
        (f"{layout.group_version_dir}/groupversion_info.py", "groupversion_info.py"),
    ):
        if path not in changes.planned:  # once per command: planned again, a new file would read as unchanged
            changes.add_file(path, rendered[template], IfExists.SKIP)
    version_init = f"{layout.group_version_dir}/__init__.py"
    current = read_text(changes, version_init)
    if current is None:
        changes.add_file(version_init, rendered["version_init.py"])
        return
    text = current
    for statement in (
        from_import(layout.strategy_module, f"{layout.kind}Strategy"),
        from_import(layout.types_module, layout.kind),
    ):
        if statement not in text:
            text = add_import(text, statement, source=version_init, first_party=package)
    line = f"Resource({layout.kind}, strategy={layout.kind}Strategy()),"
    text = insert_at_marker(text, RESOURCES_MARKER, line, source=version_init)
    changes.update_file(version_init, text)


def _plan_kind(
    changes: ChangeSet,
    root: Path,
    project: Project,
    layout: APIServerLayout,
    rendered: dict[str, bytes],
    namespaced: bool,
) -> None:
    """The kind's own files: model, strategy, test, sample and the helper roles for its users (the sample and
    roles are create api's templates: the same files as a CRD kind's, in this kind's group)."""
    changes.add_file(layout.types_file, rendered["types.py"])
    changes.add_file(layout.strategy_file, rendered["strategy.py"])
    changes.add_file(layout.test_file, rendered["apiserver_test.py"])
    api_files = render_template(
        "api",
        {
            "project_name": project.project_name,
            "package": project.package,
            "group": layout.group,
            "qualified_group": layout.qualified_group,
            "version": layout.version,
            "kind": layout.kind,
            "kind_lower": layout.kind.lower(),
            "kind_module": layout.kind_module,
            "plural": layout.plural,
            "namespaced": namespaced,
            "role_prefix": layout.role_prefix,
        },
    )
    changes.add_file(layout.sample_file, api_files["sample.yaml"])
    for role in HELPER_ROLES:
        changes.add_file(layout.helper_role_file(role), api_files[f"{role}_role.yaml"])
    apiserver_config.append(
        changes, "config/samples/kustomization.yaml", "resources", [layout.sample_file.removeprefix("config/samples/")]
    )
    apiserver_config.append(
        changes,
        "config/rbac/kustomization.yaml",
        "resources",
        [layout.helper_role_file(role).removeprefix("config/rbac/") for role in HELPER_ROLES],
    )


def _record(project: Project, layout: APIServerLayout, namespaced: bool) -> None:
    entry = project.find(layout.group, layout.version, layout.kind)
    if entry is None:
        entry = ResourceEntry(group=layout.group, domain=project.domain, version=layout.version, kind=layout.kind)
        project.resources.append(entry)
    entry.path = layout.group_version_module
    entry.apiserver = APIServerSettings(namespaced=namespaced)
