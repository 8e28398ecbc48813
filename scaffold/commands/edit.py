"""`pyop edit`: change project-wide settings after `pyop init` (Kubebuilder's `kubebuilder edit`).

--multigroup only changes PROJECT: later scaffolds use the new layout, and files already scaffolded stay where they
are (Kubebuilder leaves moving them to the user too), so the report names each file and where it would go.
--namespaced makes the project what `pyop init --namespaced` would have made, editing only the fields that
differ. --license and --owner rewrite hack/boilerplate.py.txt, which later scaffolds copy; no existing file changes.
--kubernetes-version changes PROJECT (`make manifests` and the project's tests read it from there) and, for a
version other than pyop's own models', writes the built-in kinds' models of that version (`make_models`).
--plugins=helm writes dist/chart from what config/default renders (after this command's other edits) and records
the plugin in PROJECT; run again (`make helm-chart`) it regenerates the chart, keeping the user's edits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyop_scaffold.commands import helm_chart, project_files, webhook_certificates
from pyop_scaffold.commands.headers import BOILERPLATE_FILE, license_header, validate_license
from pyop_scaffold.commands.make_models import plan_models
from pyop_scaffold.commands.project_files import read_text
from pyop_scaffold.commands.report import Report
from pyop_scaffold.edit import namespace_scope
from pyop_scaffold.errors import ConflictError, UsageError
from pyop_scaffold.project.builtin_models import ModelsPackage, models_of
from pyop_scaffold.project.config import (
    PROJECT_FILE,
    Project,
    ResourceEntry,
    dump_project,
    load_project,
    validate_kubernetes_version,
)
from pyop_scaffold.project.layout import KindLayout
from pyop_scaffold.project.names import validate_owner
from pyop_scaffold.render.changeset import ChangeSet
from pyop_scaffold.render.lock import holding_project_lock
from pyop_scaffold.render.templates import render_template

MANAGER_FILE = "config/manager/manager.yaml"
ROLE_FILE = "config/rbac/role.yaml"
ROLE_BINDING_FILE = "config/rbac/role_binding.yaml"


@dataclass(frozen=True)
class EditOptions:
    """None leaves a setting as it is."""

    multigroup: bool | None = None
    namespaced: bool | None = None
    license: str | None = None
    owner: str | None = None
    kubernetes_version: str | None = None
    plugins: str | None = None
    force: bool = False
    certificates: str | None = None  # webhooks' and aggregated servers' certificates (webhook_certificates.py)


@holding_project_lock
def edit_project(root: Path, options: EditOptions) -> Report:
    """Apply the settings in `options` to the project in `root`, all or nothing; unchanged settings write nothing."""
    root = root.resolve()
    if options.license is not None:
        validate_license(options.license)
    if options.owner is not None:
        validate_owner(options.owner)
    kubernetes_version = (
        None if options.kubernetes_version is None else validate_kubernetes_version(options.kubernetes_version)
    )
    plugins = None if options.plugins is None else helm_chart.parse_plugins(options.plugins)
    certificates = None if options.certificates is None else webhook_certificates.validate_mode(options.certificates)
    wanted = (
        options.multigroup,
        options.namespaced,
        options.license,
        options.owner,
        kubernetes_version,
        plugins,
        certificates,
    )
    if all(v is None for v in wanted):
        raise UsageError(
            "nothing to edit: pass --multigroup, --namespaced, --license, --owner, --kubernetes-version, --plugins "
            "or --certificates"
        )
    project = load_project(root)
    before = project.model_copy(deep=True)
    changes = ChangeSet(root, force=options.force)
    notes: list[str] = []
    next_step = ""

    if options.multigroup is not None:
        notes.extend(_set_multigroup(root, project, options.multigroup))
    if options.namespaced is not None:
        _plan_scope(changes, project, options.namespaced, options.force, notes)
        project.namespaced = options.namespaced or None
        if bool(before.namespaced) != options.namespaced:
            next_step = "regenerate config/rbac/role.yaml from your markers with: make manifests"
    if options.license is not None or options.owner is not None:
        _plan_boilerplate(changes, project, options)
    if kubernetes_version is not None and kubernetes_version != project.effective_kubernetes_version:
        before_models = models_of(project)
        project.kubernetes_version = kubernetes_version
        notes.extend(_plan_models_change(changes, project, before_models))
        next_step = next_step or "regenerate the CRDs' embedded built-in schemas with: make manifests"
    if certificates is not None:
        webhook_certificates.choose(project, certificates)  # recorded; the next create webhook/apiserver uses it
    if plugins:
        notes.extend(helm_chart.plan_helm_chart(changes, project))
        next_step = next_step or "check the chart with: make helm-lint"
    if project != before:
        changes.update_file(PROJECT_FILE, dump_project(project))
    files = project_files.apply(changes)
    if not changes.writes():
        notes.append("nothing changed: the project already has these settings")
    return Report(files=files, notes=notes, next_step=next_step, collapsed=[str(models_of(project).folder)])


def _plan_models_change(changes: ChangeSet, project: Project, before: ModelsPackage) -> list[str]:
    """The built-in models of the new version; code already scaffolded keeps its imports, which the notes name."""
    notes = plan_models(changes, project) if models_of(project).generated_by_project else []
    after = models_of(project)
    if after.package != before.package:
        notes.append(
            f"built-in kinds now come from {after.package} (Kubernetes {after.kubernetes_version}); code that "
            f"imports {before.package} keeps doing so until you change its imports"
        )
    return notes


def _set_multigroup(root: Path, project: Project, multigroup: bool) -> list[str]:
    """Record the layout; the notes list the files of existing kinds that the new layout would put elsewhere."""
    groups = project.own_groups()
    if not multigroup and len(groups) > 1:
        raise UsageError(
            f"invalid --multigroup=false: this project has groups {', '.join(map(repr, groups))}, "
            "and a single-group project holds one"
        )
    if bool(project.multigroup) == multigroup:
        return []
    old = project.model_copy(deep=True)
    project.multigroup = multigroup or None
    moves = [move for entry in project.resources for move in _moved_files(root, old, project, entry)]
    if not moves:
        return []
    layout = "api/<group>/<version>" if multigroup else "api/<version>"
    notes = [
        f"new APIs use {layout}; existing files stay where they are. Move them by hand if you want one layout "
        "(then fix their imports in main.py and tests, and each resource's path in PROJECT):"
    ]
    notes.extend(f"  {source} -> {target}" for source, target in dict.fromkeys(moves))
    return notes


def _moved_files(root: Path, old: Project, new: Project, entry: ResourceEntry) -> list[tuple[str, str]]:
    from pyop.api.naming import default_plural

    plural = entry.plural or default_plural(entry.kind)
    before = KindLayout(old, entry.group, entry.version, entry.kind, plural, api_package=entry.path)
    after = KindLayout(new, entry.group, entry.version, entry.kind, plural)
    # Only Python modules: config files (helper roles, CRD patches) work from any path kustomize lists them under.
    candidates: list[tuple[str, str]] = []
    if entry.api is not None:
        candidates.append((before.types_file, after.types_file))
        candidates.append((f"{before.api_dir}/groupversion_info.py", f"{after.api_dir}/groupversion_info.py"))
        candidates.append((before.conversion_file, after.conversion_file))
    if entry.controller:
        candidates.append((before.controller_file, after.controller_file))
    if entry.webhooks is not None:
        candidates.append((before.webhook_file, after.webhook_file))
    return [(src, dst) for src, dst in candidates if src != dst and (root / src).is_file()]


def _plan_scope(changes: ChangeSet, project: Project, namespaced: bool, force: bool, notes: list[str]) -> None:
    """Plan the four scope edits; files that cannot be edited in place are refused together, or with --force
    replaced by the template's version (main.py only its watch_namespaces function, so registrations stay)."""
    main_file = f"{project.package}/main.py"
    edits = {
        MANAGER_FILE: namespace_scope.set_watch_namespace_env,
        ROLE_BINDING_FILE: namespace_scope.set_binding_scope,
        ROLE_FILE: namespace_scope.set_role_scope,
        main_file: namespace_scope.set_namespace_required,
    }
    rendered: dict[str, bytes] | None = None
    refused: list[str] = []
    for path, edit in edits.items():
        text = read_text(changes, path)
        if text is None:
            notes.append(f"{path} is missing: left as it is")
            continue
        try:
            changes.update_file(path, edit(text, namespaced, source=path))
            continue
        except namespace_scope.ScopeEditError as exc:
            if not force:
                refused.append(f"{path} ({exc})")
                continue
        if rendered is None:
            rendered = _render_init(changes, project, namespaced)
        fresh = rendered[path].decode("utf-8")
        if path == main_file:
            try:
                fresh = namespace_scope.replace_function(text, fresh, namespace_scope.WATCH_FUNCTION, source=path)
            except namespace_scope.ScopeEditError as exc:
                notes.append(f"{path}: {exc}; make {namespace_scope.WATCH_FUNCTION}() match the scope by hand")
                continue
        changes.add_file(path, fresh)
    if refused:
        scope = "namespace scope" if namespaced else "cluster scope"
        raise ConflictError(
            f"cannot switch to {scope} keeping your changes in {'; '.join(refused)}: pass --force to replace "
            "what differs with the template's version"
        )


def _render_init(changes: ChangeSet, project: Project, namespaced: bool) -> dict[str, bytes]:
    """The files `pyop init` would write for this project with the new scope (and its current licence header)."""
    from pyop_scaffold.commands.init import template_context

    context = template_context(
        project_name=project.project_name,
        package=project.package,
        domain=project.domain,
        owner="",
        license_name="apache2",
        header=read_text(changes, BOILERPLATE_FILE) or "",
        namespaced=namespaced,
        multigroup=bool(project.multigroup),
    )
    return render_template("init", context)


def _plan_boilerplate(changes: ChangeSet, project: Project, options: EditOptions) -> None:
    """--owner alone keeps the Apache 2.0 header and changes the name in it; --license none empties the file."""
    current = read_text(changes, BOILERPLATE_FILE)
    license_name = options.license or ("apache2" if current is None or current.strip() else "none")
    if license_name == "none" and options.owner:
        raise UsageError(
            f"invalid --owner {options.owner!r}: the licence is none, so no header names an owner "
            "(pass --license apache2 too)"
        )
    header = license_header(license_name, options.owner or "", project.project_name)
    changes.update_file(BOILERPLATE_FILE, header)
