"""`pyop make models`: typed models of the built-in kinds for the project's Kubernetes version.

A project targeting the version pyop's own models were generated from (`pyop.api.k8s.KUBERNETES_VERSION`) imports
those and needs nothing here. A project whose PROJECT names another `kubernetesVersion` gets the same generator's
output for that version as its package `<package>.k8s` (`builtin_models`), which its scaffolded controllers and
webhooks of built-in kinds import. `pyop init` and `pyop edit --kubernetes-version` write it too, so the package
exists before the first `create api --group apps`.

Every file there starts with the generator's header line; a file there without it is the user's and is never
overwritten without `--force`. A generated file this version no longer has (a type dropped between versions) is
emptied to a docstring asking for its removal: pyop's writes never delete.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyop_scaffold.commands import project_files
from pyop_scaffold.commands.report import Report
from pyop_scaffold.project.builtin_models import (
    GENERATED_HEADER,
    ModelsPackage,
    generated_files,
    is_generated_file,
    models_of,
)
from pyop_scaffold.project.config import Project, load_project
from pyop_scaffold.render.changeset import ChangeSet, IfExists
from pyop_scaffold.render.lock import holding_project_lock

RETIRED = '"""Not generated for this Kubernetes version any more: delete this file."""\n'


@dataclass(frozen=True)
class ModelsOptions:
    force: bool = False


@holding_project_lock
def make_models(root: Path, options: ModelsOptions) -> Report:
    """Write (or refresh) the project's built-in models, all files or none."""
    root = root.resolve()
    project = load_project(root)
    changes = ChangeSet(root, force=options.force)
    notes = plan_models(changes, project)
    return Report(files=project_files.apply(changes), notes=notes, collapsed=[str(models_of(project).folder)])


def plan_models(changes: ChangeSet, project: Project) -> list[str]:
    """Plan the models package `project` needs into `changes`; the notes say what it imports from."""
    models = models_of(project)
    if not models.generated_by_project:
        return [
            f"Kubernetes {models.kubernetes_version}: built-in kinds are imported from {models.package}; "
            "nothing to generate"
        ]
    files = generated_files(models)
    for path, text in files.items():
        current = changes.read_text(path)
        if current is None or is_generated_file(current):
            changes.update_file(path, text)
        else:
            changes.add_file(path, text, IfExists.ERROR)  # the user's file: a conflict unless --force
    retired = _retired_files(changes.root, models, set(files))
    for path in retired:
        changes.update_file(path, f"{_header_of(files)}{RETIRED}")
    notes = [f"Kubernetes {models.kubernetes_version}: built-in kinds are imported from {models.package}"]
    notes.extend(f"{path}: not in Kubernetes {models.kubernetes_version}; emptied, delete it" for path in retired)
    return notes


def _header_of(files: dict[str, str]) -> str:
    first = next(iter(files.values()))
    return first.split("\n", 1)[0] + "\n"


def _retired_files(root: Path, models: ModelsPackage, fresh: set[str]) -> list[str]:
    """Generated files of an earlier version that this one does not write (and not emptied already)."""
    folder = root / models.folder
    if not folder.is_dir():
        return []
    retired = []
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative in fresh or "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if text.startswith(GENERATED_HEADER) and RETIRED not in text:
            retired.append(relative)
    return retired
