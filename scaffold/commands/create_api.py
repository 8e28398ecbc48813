"""`pyop create api`: add a group/version/kind (its model, controller, sample, roles) to a project."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyop_scaffold.commands import project_files
from pyop_scaffold.commands.create_apiserver import check_not_aggregated
from pyop_scaffold.commands.dependencies import add_dependency
from pyop_scaffold.commands.headers import kind_template_context
from pyop_scaffold.commands.project_files import read_text
from pyop_scaffold.commands.report import Report
from pyop_scaffold.edit.insertion import insert_at_marker
from pyop_scaffold.edit.python_source import add_import
from pyop_scaffold.edit.yaml_edit import append_unique
from pyop_scaffold.errors import ConflictError, UsageError
from pyop_scaffold.project import builtin_kinds, foreign_kinds
from pyop_scaffold.project.config import PROJECT_FILE, APISettings, Project, ResourceEntry, dump_project, load_project
from pyop_scaffold.project.foreign_kinds import ExternalFlags, ForeignKind
from pyop_scaffold.project.layout import KindLayout
from pyop_scaffold.project.names import (
    snake_case,
    validate_group,
    validate_kind,
    validate_plural,
    validate_version,
)
from pyop_scaffold.render.changeset import ChangeSet, IfExists
from pyop_scaffold.render.lock import holding_project_lock
from pyop_scaffold.render.python_literal import import_sections, python_literal
from pyop_scaffold.render.templates import render_template

HELPER_ROLES = ("admin", "editor", "viewer")


@dataclass(frozen=True)
class CreateAPIOptions:
    group: str
    version: str
    kind: str
    plural: str | None = None
    namespaced: bool = True
    resource: bool = True
    controller: bool = True
    force: bool = False
    external: ExternalFlags = ExternalFlags()


@holding_project_lock
def create_api(root: Path, options: CreateAPIOptions) -> Report:
    root = root.resolve()
    group = validate_group(options.group)
    version = validate_version(options.version)
    kind = validate_kind(options.kind)
    if not options.resource and not options.controller:
        raise UsageError("nothing to do: --no-resource and --no-controller together scaffold nothing")
    project = load_project(root)
    foreign = foreign_kinds.resolve(
        project,
        group,
        version,
        kind,
        scaffolds_api=options.resource,
        external=options.external,
        plural=validate_plural(options.plural) if options.plural else None,
    )
    if foreign is not None:
        external_notes = foreign_kinds.check_external_module(root, foreign) if options.external.path else []
        report = _create_foreign_controller(root, project, foreign, options)
        report.notes[:0] = external_notes
        return report
    _check_single_group(project, group)
    check_not_aggregated(project, group, version, kind)
    _check_kind_unique(project, group, kind)
    plural = _plural_for(project, group, kind, options)
    _check_scope(project, group, kind, options.namespaced)
    existing = project.find(group, version, kind)
    if existing is not None and not options.force:
        if options.resource and existing.api is not None:
            raise ConflictError(
                f"API {group}/{version}, Kind={kind} already exists in PROJECT: pass --force to scaffold it again"
            )
        if options.controller and existing.controller:
            raise ConflictError(
                f"controller for {group}/{version}, Kind={kind} already exists: pass --force to scaffold it again"
            )

    layout = KindLayout(project, group, version, kind, plural, api_package=existing.path if existing else None)
    notes: list[str] = []
    controller = options.controller
    owner = next((s for s in project.kinds_of(group, kind) if s.controller and s.version != version), None)
    if controller and owner is not None:
        # One controller reconciles a kind, whatever the version; its file is per kind, not per version.
        controller = False
        notes.append(f"kept the existing controller of {group}/{kind} (scaffolded with {owner.version})")
    if options.resource and any(s.api is not None and s.version != version for s in project.kinds_of(group, kind)):
        notes.append(
            f"{group}/{kind} now has several versions: mark the one stored in etcd with "
            "# +kubebuilder:storageversion above its class before `make manifests`"
        )
    changes = ChangeSet(root, force=options.force)
    rendered = render_template("api", _context(root, project, layout, options.namespaced))
    if options.resource:
        _plan_resource(changes, layout, rendered)
    if controller:
        _plan_controller(changes, layout, rendered)
    _plan_project_entry(changes, project, layout, options.resource, controller, options.namespaced)
    report = Report(files=project_files.apply(changes), notes=notes)
    report.next_step = (
        "edit the model in " + layout.types_file + ", then run: make manifests"
        if options.resource
        else "implement the reconciler in " + layout.controller_file
    )
    return report


def _plural_for(project: Project, group: str, kind: str, options: CreateAPIOptions) -> str:
    """The plural of the kind; every version of a kind shares it, because they form one CRD."""
    from pyop.api.naming import default_plural

    plural = validate_plural(options.plural) if options.plural else None
    siblings = project.kinds_of(group, kind)
    known = next((s.plural or default_plural(kind) for s in siblings if s.api is not None), None)
    if known is not None and plural is not None and plural != known:
        raise UsageError(
            f"invalid plural {plural!r}: other versions of {group}/{kind} use {known!r}, and all versions of a kind "
            "share one CRD"
        )
    plural = plural or known or default_plural(kind)
    _check_plural_unique(project, group, kind, plural)
    return plural


def _check_plural_unique(project: Project, group: str, kind: str, plural: str) -> None:
    """Two kinds of one group with one plural would be one CRD (`<plural>.<group>`): the second would replace the
    first's file in config/crd/bases and its resource in the API server."""
    from pyop.api.naming import default_plural

    for other in project.resources:
        if other.group == group and other.kind != kind and (other.plural or default_plural(other.kind)) == plural:
            raise UsageError(
                f"invalid plural {plural!r}: kind {group}/{other.kind} already uses it, and a plural names one CRD "
                f"({plural}.{other.qualified_group}); pass another --plural"
            )


def _check_kind_unique(project: Project, group: str, kind: str) -> None:
    """`Captain` and `CAPTAIN` would share a singular name (`captain`, which the API server requires unique in a
    group) and the files named after it (captain_types.py, the sample, the roles): the second would overwrite
    the first's with --force."""
    for other in project.resources:
        if other.group == group and other.kind != kind and snake_case(other.kind) == snake_case(kind):
            raise UsageError(
                f"invalid kind {kind!r}: kind {group}/{other.kind} has the same singular name "
                f"{other.kind.lower()!r} and files ({snake_case(kind)}_types.py); choose another name"
            )
        if other.group == group and other.kind != kind and other.kind.lower() == kind.lower():
            raise UsageError(
                f"invalid kind {kind!r}: kind {group}/{other.kind} has the same singular name {kind.lower()!r}, "
                "which names its sample and roles; choose another name"
            )


def _create_foreign_controller(root: Path, project: Project, foreign: ForeignKind, options: CreateAPIOptions) -> Report:
    """A controller for a built-in or external kind: no model, sample, CRD or helper roles (the kind is not the
    project's), the model imported from where it lives, RBAC markers for its API group."""
    existing = project.find(foreign.group, foreign.version, foreign.kind)
    gvk = f"{foreign.group}/{foreign.version}, Kind={foreign.kind}"
    if existing is not None and existing.controller and not options.force:
        raise ConflictError(f"controller for {gvk} already exists: pass --force to scaffold it again")
    owner = next((s for s in project.kinds_of(foreign.group, foreign.kind) if s.controller and s is not existing), None)
    if owner is not None:
        raise UsageError(
            f"invalid --version {foreign.version!r}: {foreign.group}/{foreign.kind} already has a controller "
            f"(scaffolded with {owner.version}); one controller reconciles a kind"
        )
    layout = foreign.layout(project)
    changes = ChangeSet(root, force=options.force)
    rendered = render_template("api", _foreign_context(root, project, layout, foreign))
    if project.multigroup:
        changes.add_file(f"{layout.controllers_dir}/__init__.py", rendered["controllers_group_init.py"], IfExists.SKIP)
    changes.add_file(layout.controller_file, rendered["foreign_controller.py"])
    changes.add_file(layout.controller_test_file, rendered["foreign_controller_test.py"])
    _register_controller(changes, layout)
    notes: list[str] = []
    if foreign.requirement is not None:
        notes += add_dependency(changes, foreign.requirement)
    entry = existing
    if entry is None:
        entry = ResourceEntry(group=foreign.group, version=foreign.version, kind=foreign.kind)
        project.resources.append(entry)
    foreign.record(entry)
    entry.controller = True
    changes.update_file(PROJECT_FILE, dump_project(project))
    report = Report(files=project_files.apply(changes), notes=notes)
    report.next_step = f"implement the reconciler in {layout.controller_file}, then run: make manifests"
    return report


def _foreign_context(root: Path, project: Project, layout: KindLayout, foreign: ForeignKind) -> dict[str, object]:
    if foreign.builtin is not None:
        sample = builtin_kinds.minimal_object(foreign.builtin, f"{foreign.kind.lower()}-sample")
        namespaced = foreign.builtin.namespaced
        has_status = builtin_kinds.has_status(foreign.builtin)
    else:
        api_version = f"{foreign.api_group}/{foreign.version}"
        name = f"{foreign.kind.lower()}-sample"
        sample = {"apiVersion": api_version, "kind": foreign.kind, "metadata": {"name": name}}
        namespaced = True
        has_status = True
    model_import = f"from {foreign.model_module} import {foreign.kind}"
    first_party = [f"from {layout.controller_module} import setup_with_manager"]
    third_party: list[str] = []
    # ruff's isort counts a module found in the project folder as first-party, an installed one as third-party.
    top = foreign.model_module.partition(".")[0]
    (first_party if (root / top).is_dir() or (root / f"{top}.py").is_file() else third_party).append(model_import)
    return {
        **_context(root, project, layout, namespaced),
        "controller_imports": import_sections(
            ["from pyop.controller import Request, Result", "from pyop.manager import Manager", *third_party],
            [s for s in first_party if s != first_party[0]],
        ),
        "controller_test_imports": import_sections(
            [
                "import pytest",
                "from pyop.manager import Manager, ManagerOptions",
                "from pyop.testing import TestAPIServer",
                *third_party,
            ],
            first_party,
        ),
        "rbac_group": foreign.rbac_group,
        "has_status": has_status,
        "external": not foreign.core,
        "sample_object": python_literal(sample, prefix_width=len("SAMPLE = ")),
    }


def _check_single_group(project: Project, group: str) -> None:
    """Without --multigroup, every API lives in api/<version>/, so two groups would share one package; built-in
    and external kinds are not a group of the project's."""
    other = next((g for g in project.own_groups() if g != group), None)
    if other is not None and not project.multigroup:
        raise UsageError(
            f"invalid group {group!r}: this project already has group {other!r} and is not multigroup; "
            "turn on the multigroup layout first with `pyop edit --multigroup`"
        )


def _check_scope(project: Project, group: str, kind: str, namespaced: bool) -> None:
    for sibling in project.kinds_of(group, kind):
        if sibling.api is not None and sibling.api.namespaced != namespaced:
            scope = "namespaced" if sibling.api.namespaced else "cluster-scoped"
            raise UsageError(
                f"invalid scope for {group}/{kind}: version {sibling.version} is {scope}, and all versions of a kind "
                "share one scope"
            )


def _context(root: Path, project: Project, layout: KindLayout, namespaced: bool) -> dict[str, object]:
    from pyop.api.naming import default_plural

    return {
        **kind_template_context(root, project, layout),
        "custom_plural": layout.plural != default_plural(layout.kind),
        "namespaced": namespaced,
        "api_module": layout.api_module,
        "role_prefix": layout.role_prefix,
        "controller_module": layout.controller_module,
    }


def _plan_resource(changes: ChangeSet, layout: KindLayout, rendered: dict[str, bytes]) -> None:
    if layout.group_dir is not None:
        changes.add_file(f"{layout.group_dir}/__init__.py", rendered["group_init.py"], IfExists.SKIP)
    changes.add_file(f"{layout.api_dir}/__init__.py", rendered["version_init.py"], IfExists.SKIP)
    changes.add_file(f"{layout.api_dir}/groupversion_info.py", rendered["groupversion_info.py"], IfExists.SKIP)
    changes.add_file(layout.types_file, rendered["types.py"])
    changes.add_file(layout.sample_file, rendered["sample.yaml"])
    for role in HELPER_ROLES:
        changes.add_file(layout.helper_role_file(role), rendered[f"{role}_role.yaml"])

    _append(changes, "config/crd/kustomization.yaml", "resources", [layout.crd_file.removeprefix("config/crd/")])
    _append(
        changes, "config/samples/kustomization.yaml", "resources", [layout.sample_file.removeprefix("config/samples/")]
    )
    _append(
        changes,
        "config/rbac/kustomization.yaml",
        "resources",
        [layout.helper_role_file(role).removeprefix("config/rbac/") for role in HELPER_ROLES],
    )
    # The CRDs join the deployable set with the first API (Kubebuilder leaves `#- ../crd` for the user to enable).
    _append_before_marker(changes, "config/default/kustomization.yaml", "../crd")


def _plan_controller(changes: ChangeSet, layout: KindLayout, rendered: dict[str, bytes]) -> None:
    if layout.project.multigroup:
        changes.add_file(f"{layout.controllers_dir}/__init__.py", rendered["controllers_group_init.py"], IfExists.SKIP)
    changes.add_file(layout.controller_file, rendered["controller.py"])
    changes.add_file(layout.controller_test_file, rendered["controller_test.py"])
    _register_controller(changes, layout)


def _register_controller(changes: ChangeSet, layout: KindLayout) -> None:
    """main.py imports the controller module and calls its setup_with_manager at the builder insertion point."""
    main = read_text(changes, layout.main_file)
    if main is None:
        raise UsageError(f"cannot register the controller: {layout.main_file} is missing")
    package, _, module = layout.controller_module.rpartition(".")
    # Among the project's own imports (isort's first-party group), where ruff's import sorting expects it.
    statement = f"from {package} import {module} as {layout.controller_alias}"
    main = add_import(main, statement, source=layout.main_file, first_party=layout.project.package)
    main = insert_at_marker(
        main, "builder", f"{layout.controller_alias}.setup_with_manager(manager)", source=layout.main_file
    )
    changes.update_file(layout.main_file, main)


def _plan_project_entry(
    changes: ChangeSet, project: Project, layout: KindLayout, resource: bool, controller: bool, namespaced: bool
) -> None:
    from pyop.api.naming import default_plural

    entry = project.find(layout.group, layout.version, layout.kind)
    if entry is None:
        entry = ResourceEntry(group=layout.group, domain=project.domain, version=layout.version, kind=layout.kind)
        project.resources.append(entry)
    if layout.plural != default_plural(layout.kind):
        entry.plural = layout.plural
    if resource:
        entry.api = APISettings(crdVersion="v1", namespaced=namespaced)
        entry.path = layout.api_module
    if controller:
        entry.controller = True
    changes.update_file(PROJECT_FILE, dump_project(project))


def _append(changes: ChangeSet, path: str, key: str, values: list[str]) -> None:
    text = read_text(changes, path)
    if text is None:
        raise UsageError(f"cannot add to {path}: the file is missing (was the project made by `pyop init`?)")
    changes.update_file(path, append_unique(text, key, values, source=path))


def _append_before_marker(changes: ChangeSet, path: str, value: str) -> None:
    text = read_text(changes, path)
    if text is None:
        raise UsageError(f"cannot add to {path}: the file is missing (was the project made by `pyop init`?)")
    if any(line.strip() == f"- {value}" for line in text.splitlines()):
        return
    changes.update_file(path, insert_at_marker(text, "defaultresources", f"- {value}", source=path))
