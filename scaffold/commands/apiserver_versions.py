"""A kind's next version in the project's aggregated API server (`pyop create apiserver` for a kind it already
serves in another version): the new version's model becomes a spoke of the kind's hub.

pyop.apiserver stores a kind served in several versions once, in its hub's version, and converts every request
through it (`pyop.apiserver.conversion`). The hub is the version first served (its objects are already stored in
it) unless a version's model is already marked: its model gets `pyop.webhook.Hub` among its bases (as `pyop create
webhook --conversion` marks a CRD's hub), and the new version's model gets ``convert_to``/``convert_from``, which
copy the object through its wire form with a TODO where fields that differ are translated.
"""

from __future__ import annotations

import ast

from pyop_scaffold.commands.project_files import read_text
from pyop_scaffold.commands.spoke_conversion import add_conversion_methods
from pyop_scaffold.edit.python_source import add_class_base, add_import
from pyop_scaffold.errors import UsageError
from pyop_scaffold.project.apiserver_layout import APIServerLayout
from pyop_scaffold.project.config import Project
from pyop_scaffold.render.changeset import ChangeSet

HUB_BASE = "Hub"
HUB_IMPORT = "from pyop.webhook import Hub"


def served_versions(project: Project, group: str, kind: str) -> list[str]:
    """The versions the aggregated server already serves ``kind`` of ``group`` in, in PROJECT's order."""
    return [entry.version for entry in project.kinds_of(group, kind) if entry.apiserver is not None]


def plan_spoke(changes: ChangeSet, project: Project, layout: APIServerLayout, versions: list[str]) -> list[str]:
    """Plan the hub's mark and the new version's conversion methods (``versions``: those served before this
    command); the notes for the report."""
    others = [version for version in versions if version != layout.version]
    if not others:
        return []
    sibling = {
        version: APIServerLayout(project, layout.group, version, layout.kind, layout.plural) for version in others
    }
    hub_version = next((v for v in others if _is_hub(_read(changes, sibling[v].types_file), layout.kind)), others[0])
    hub = sibling[hub_version]
    text = _read(changes, hub.types_file)
    if not _is_hub(text, layout.kind):
        text = add_import(text, HUB_IMPORT, source=hub.types_file, first_party=project.package)
        text = add_class_base(text, layout.kind, HUB_BASE, source=hub.types_file)
        changes.update_file(hub.types_file, text)
    spoke = _read(changes, layout.types_file)
    converting = add_conversion_methods(
        spoke,
        kind=layout.kind,
        spoke_version=layout.version,
        hub_version=hub_version,
        hub_module=hub.types_module,
        package=project.package,
        added_by="apiserver",
        source=layout.types_file,
    )
    if converting != spoke:
        changes.update_file(layout.types_file, converting)
    return [
        f"{layout.group}/{layout.version}, Kind={layout.kind} converts through the hub {hub_version} "
        f"({hub.types_file}): translate the fields that differ in {layout.types_file}"
    ]


def _is_hub(text: str, kind: str) -> bool:
    """Whether the module's ``kind`` class has ``Hub`` among its bases."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef) and node.name == kind:
            return any(isinstance(base, ast.Name) and base.id == HUB_BASE for base in node.bases)
    return False


def _read(changes: ChangeSet, path: str) -> str:
    text = read_text(changes, path)
    if text is None:
        raise UsageError(f"cannot add a version: {path} is missing (the model of a version the server serves)")
    return text


__all__ = ["plan_spoke", "served_versions"]
