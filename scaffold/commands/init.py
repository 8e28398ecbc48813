"""`pyop init`: write a new operator project into a folder."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pyop_scaffold.commands import project_files
from pyop_scaffold.commands.headers import BOILERPLATE_FILE, license_header, validate_license
from pyop_scaffold.commands.make_models import plan_models
from pyop_scaffold.commands.report import Report
from pyop_scaffold.errors import ProjectError
from pyop_scaffold.project.builtin_models import models_of
from pyop_scaffold.project.config import PROJECT_FILE, Project, dump_project, validate_kubernetes_version
from pyop_scaffold.project.names import python_package_name, validate_domain, validate_owner, validate_project_name
from pyop_scaffold.render.changeset import ChangeSet
from pyop_scaffold.render.lock import holding_project_lock
from pyop_scaffold.render.templates import render_template


@dataclass(frozen=True)
class InitOptions:
    domain: str = "my.domain"
    project_name: str | None = None
    owner: str = ""
    license: str = "apache2"
    namespaced: bool = False
    multigroup: bool = False
    kubernetes_version: str | None = None  # None: PROJECT names none, so pyop's pinned default applies
    force: bool = False


@holding_project_lock
def init_project(root: Path, options: InitOptions) -> Report:
    """Scaffold a project in `root`; refuses a folder that holds a project, or any files without --force."""
    from pyop_scaffold import __version__

    root = root.resolve()
    domain = validate_domain(options.domain)
    project_name = validate_project_name(options.project_name or root.name)
    validate_license(options.license)
    validate_owner(options.owner)
    kubernetes_version = (
        None if options.kubernetes_version is None else validate_kubernetes_version(options.kubernetes_version)
    )
    if (root / PROJECT_FILE).exists():
        raise ProjectError(f"{root} already holds a pyop project (PROJECT exists); use `pyop create api` to add to it")
    if root.exists() and not root.is_dir():
        raise ProjectError(f"{root} is a file, not a folder")
    if root.is_dir() and any(_user_entries(root)) and not options.force:
        raise ProjectError(f"{root} is not empty: pass --force to scaffold into it anyway (existing files are kept)")

    package = python_package_name(project_name)
    header = license_header(options.license, options.owner, project_name)
    context = template_context(
        project_name=project_name,
        package=package,
        domain=domain,
        owner=options.owner,
        license_name=options.license,
        header=header,
        namespaced=options.namespaced,
        multigroup=options.multigroup,
    )
    changes = ChangeSet(root, force=options.force)
    for path, content in render_template("init", context).items():
        changes.add_file(path, content)
    changes.add_file(BOILERPLATE_FILE, header)
    project = Project(
        domain=domain,
        projectName=project_name,
        package=package,
        cliVersion=__version__,
        multigroup=options.multigroup or None,
        namespaced=options.namespaced or None,
        kubernetesVersion=kubernetes_version,
    )
    changes.add_file(PROJECT_FILE, dump_project(project))
    notes = plan_models(changes, project) if models_of(project).generated_by_project else []
    return Report(
        files=project_files.apply(changes),
        notes=notes,
        next_step="define a resource with: pyop create api",
        collapsed=[str(models_of(project).folder)],
    )


def template_context(
    *,
    project_name: str,
    package: str,
    domain: str,
    owner: str,
    license_name: str,
    header: str,
    namespaced: bool,
    multigroup: bool,
) -> dict[str, object]:
    """The init template's variables; `pyop edit` renders the same files to fall back on with --force."""
    from pyop_scaffold import __version__

    return {
        "project_name": project_name,
        "package": package,
        "domain": domain,
        "owner": owner,
        "license": license_name,
        "license_header": header,
        "namespaced": namespaced,
        "multigroup": multigroup,
        "pyop_version": __version__,
        "leader_election_id": f"{_short_hash(project_name + domain)}.{domain}",
    }


def _user_entries(root: Path) -> list[Path]:
    """Entries that count as the user's files; version-control folders do not."""
    return [p for p in root.iterdir() if p.name not in {".git", ".hg", ".svn", ".idea", ".vscode"}]


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]
