"""`pyop make manifests`: CRDs and RBAC roles from the project's models and markers (controller-gen's job)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scaffold.commands.report import Report
from scaffold.edit.yaml_edit import append_unique
from scaffold.errors import PyopError
from scaffold.manifests.errors import ManifestError
from scaffold.project.config import load_project
from scaffold.render.changeset import ChangeSet

CRD_DIR = "config/crd/bases"
ROLE_FILE = "config/rbac/role.yaml"
CRD_KUSTOMIZATION = "config/crd/kustomization.yaml"


@dataclass(frozen=True)
class ManifestOptions:
    check_samples: bool = False
    max_description_length: int | None = None


def make_manifests(root: Path, options: ManifestOptions) -> Report:
    """Generate every manifest in memory, check them all, then write them (or nothing, on any problem)."""
    from scaffold import __version__
    from scaffold.manifests.builtin import builtin_schema
    from scaffold.manifests.crd.assemble import CRDOptions, build_crds
    from scaffold.manifests.crd.schema import SchemaBuilder
    from scaffold.manifests.loader import imported_project, load_kinds
    from scaffold.manifests.rbac import build_roles, collect_rbac_markers
    from scaffold.manifests.yaml_output import dump_documents

    root = root.resolve()
    project = load_project(root)
    max_desc = options.max_description_length
    if max_desc is None:
        max_desc = project.manifests_option("maxDescLen")
    with imported_project(root, project.package):
        kinds = load_kinds(root, project.package)
        crds = build_crds(
            kinds,
            SchemaBuilder(builtin_schema),
            CRDOptions(generator_version=__version__, max_description_length=max_desc),
        )
        roles = build_roles(collect_rbac_markers(root, project.package), namespaced_project=bool(project.namespaced))
    _accept(crd.obj for crd in crds)

    changes = ChangeSet(root)
    for crd in crds:
        changes.update_file(f"{CRD_DIR}/{crd.file_name}", dump_documents([crd.obj]))
    changes.update_file(ROLE_FILE, dump_documents(roles))
    kustomization = changes.read_text(CRD_KUSTOMIZATION)
    if kustomization is not None and crds:
        entries = [f"bases/{crd.file_name}" for crd in crds]
        changes.update_file(
            CRD_KUSTOMIZATION, append_unique(kustomization, "resources", entries, source=CRD_KUSTOMIZATION)
        )
    report = Report(files=changes.apply())
    if options.check_samples:
        report.notes.extend(check_samples(root, [crd.obj for crd in crds]))
    report.next_step = "install the CRDs with: make install" if crds else "add an API with: pyop create api"
    return report


def _accept(crds: object) -> None:
    """The offline acceptance check: refuse CRDs the API server would reject, in its own words."""
    from scaffold.manifests.acceptance import check_crd, format_errors

    problems: list[str] = []
    for crd in crds:  # type: ignore[attr-defined]
        errors = check_crd(crd)
        if errors:
            problems.extend(format_errors(crd["metadata"]["name"], errors).splitlines())
    if problems:
        raise ManifestError(problems)


def check_samples(root: Path, crds: list[dict]) -> list[str]:  # type: ignore[type-arg]
    """Validate every sample under config/samples against the schema of its CRD version."""
    import yaml

    from pyop.schema import unknown_fields, validate

    schemas = {
        (crd["spec"]["group"], version["name"], crd["spec"]["names"]["kind"]): version["schema"]["openAPIV3Schema"]
        for crd in crds
        for version in crd["spec"]["versions"]
    }
    problems: list[str] = []
    checked = 0
    for path in sorted((root / "config" / "samples").glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        rel = path.relative_to(root)
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not isinstance(document, dict):
                continue
            group, _, version = str(document.get("apiVersion", "")).rpartition("/")
            schema = schemas.get((group, version, document.get("kind")))
            if schema is None:
                continue
            checked += 1
            for error in validate(document, schema):
                problems.append(f"{rel}: {error}")
            for field in unknown_fields(document, schema):
                problems.append(f"{rel}: {field}: unknown field (the API server would drop it)")
    if problems:
        raise ManifestError(problems)
    return [f"checked {checked} sample(s) against their CRDs: all valid"]


__all__ = ["ManifestOptions", "PyopError", "check_samples", "make_manifests"]
