"""`pyop make manifests`: CRDs, RBAC roles and webhook configurations from the project's models and markers
(controller-gen's job)."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyop_scaffold.commands.report import Report
from pyop_scaffold.edit.yaml_edit import append_unique
from pyop_scaffold.errors import PyopError
from pyop_scaffold.manifests.errors import ManifestError
from pyop_scaffold.project.config import load_project
from pyop_scaffold.render.changeset import ChangeSet
from pyop_scaffold.render.lock import holding_project_lock

CRD_DIR = "config/crd/bases"
ROLE_FILE = "config/rbac/role.yaml"
WEBHOOK_FILE = "config/webhook/manifests.yaml"
CRD_KUSTOMIZATION = "config/crd/kustomization.yaml"


@dataclass(frozen=True)
class ManifestOptions:
    """Generator options; None means "as PROJECT's `manifests:` section says" (then the built-in default)."""

    check_samples: bool = False
    max_description_length: int | None = None
    header_file: Path | None = None
    # --check-compat: the git ref, file or folder of the CRDs to compare with ("HEAD" for the last commit's).
    check_compat: str | None = None


@holding_project_lock
def make_manifests(root: Path, options: ManifestOptions) -> Report:
    """Generate every manifest in memory, check them all (and the samples, with --check), then write them, or
    nothing at all on any problem."""
    from pyop_scaffold import __version__
    from pyop_scaffold.commands.apiserver_manifests import served_schemas
    from pyop_scaffold.manifests import incremental
    from pyop_scaffold.manifests.crd.assemble import CRDOptions, build_crds
    from pyop_scaffold.manifests.loader import imported_project, load_kinds, user_code_errors
    from pyop_scaffold.manifests.rbac import build_roles, collect_rbac_markers
    from pyop_scaffold.manifests.samples import check_samples
    from pyop_scaffold.manifests.webhooks import build_webhook_configurations, collect_webhook_markers
    from pyop_scaffold.manifests.yaml_output import dump_documents

    root = root.resolve()
    # What this run reads, before it reads it: a stamp records it with the outputs, for the next no-op run.
    inputs = incremental.input_digest(root, _run_options(options))
    project = load_project(root)
    settings = _settings(project)
    max_desc = options.max_description_length
    if max_desc is None:
        max_desc = _int_setting(settings, "maxDescLen")
    if max_desc is not None and max_desc < 0:
        raise ManifestError([f"maxDescLen must be 0 or more, not {max_desc}"])
    header = _header(root, options.header_file, settings)
    builder = schema_builder(project)
    # Whatever the project's modules raise while they are imported, walked or read becomes one located line.
    with imported_project(root, project.package), user_code_errors(root):
        kinds = load_kinds(root, project.package)
        # The CRDs nothing they are made of changed since the last run are kept as written (`partial`).
        reusable = inputs is not None and not options.check_samples and options.check_compat is None
        planner, own_files, kept = _kept_crds(root, kinds, _run_options(options), reusable)
        skip = frozenset((name.split("/", 1)[0], name.split("/", 1)[1]) for name in kept)
        crds = build_crds(
            kinds,
            builder,
            CRDOptions(generator_version=__version__, max_description_length=max_desc),
            skip=skip,
        )
        roles = build_roles(collect_rbac_markers(root, project.package), namespaced_project=bool(project.namespaced))
        # No webhook markers, no file: a project without webhooks has no config/webhook (and a hand-written
        # manifests.yaml is not pyop's to remove).
        webhooks = build_webhook_configurations(collect_webhook_markers(root, project.package))
        # The aggregated API server's kinds are no CRDs: their schemas only check their samples.
        served = served_schemas(root, project, builder) if options.check_samples else []
    _accept((crd.obj for crd in crds), kinds, root)
    notes: list[str] = []
    if options.check_compat is not None:
        notes.append(_check_compat(root, options.check_compat, [crd.obj for crd in crds]))
    if options.check_samples:
        checked, problems = check_samples(root, [crd.obj for crd in crds] + served)
        if problems:
            raise ManifestError(problems)
        notes.append(f"checked {checked} sample(s) against their CRDs: all valid")

    changes = ChangeSet(root)
    # Every CRD file in file-name order, as a full run writes them; a kept one with the bytes it has.
    crd_files = {f"{CRD_DIR}/{crd.file_name}": crd for crd in crds}
    crd_files.update({entry.file: None for entry in kept.values()})
    for path in sorted(crd_files):
        crd = crd_files[path]
        changes.update_file(path, dump_documents([crd.obj], header) if crd is not None else (root / path).read_bytes())
    changes.update_file(ROLE_FILE, dump_documents(roles, header))
    if webhooks:
        changes.update_file(WEBHOOK_FILE, dump_documents(webhooks, header))
    kustomization = changes.read_text(CRD_KUSTOMIZATION)
    if kustomization is not None and crd_files:
        entries = [f"bases/{path.removeprefix(CRD_DIR + '/')}" for path in sorted(crd_files)]
        changes.update_file(
            CRD_KUSTOMIZATION, append_unique(kustomization, "resources", entries, source=CRD_KUSTOMIZATION)
        )
    report = Report(files=changes.apply())
    report.notes.extend(notes)
    report.next_step = "install the CRDs with: make install" if crd_files else "add an API with: pyop create api"
    if inputs is None:
        incremental.forget(root)
    else:
        made = {name: (entry.file, entry.files, entry.digest) for name, entry in kept.items()}
        for crd in crds:
            name = f"{crd.group}/{crd.kind}"
            files = planner.made_of(crd.modules)
            key = planner.key(own_files.get(name, ()), files)
            if key is not None:
                made[name] = (f"{CRD_DIR}/{crd.file_name}", files, key)
        incremental.write_stamp(root, inputs, [f.path for f in report.files], report.notes, report.next_step, crds=made)
    return report


def _kept_crds(
    root: Path, kinds: list[Any], options: Any, reusable: bool
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """(the planner of CRD keys, the files of each CRD's kinds by "group/kind", the CRDs kept from the last run)."""
    from pyop_scaffold.manifests import incremental
    from pyop_scaffold.manifests.crd.assemble import kinds_by_crd
    from pyop_scaffold.manifests.partial import Planner, kept_crds

    kind_modules = {kind.cls.__module__: kind.source.replace("\\", "/") for kind in kinds}
    planner = Planner(root, options, kind_modules)
    own_files = {
        f"{group}/{kind}": tuple(sorted({version.source.replace("\\", "/") for version in versions}))
        for (group, kind), versions in kinds_by_crd(kinds).items()
    }
    kept = kept_crds(planner, incremental.read_stamp(root), own_files) if reusable else {}
    return planner, own_files, kept


def _run_options(options: ManifestOptions) -> Any:
    """The options as the no-op check records them."""
    from pyop_scaffold.manifests.incremental import RunOptions

    header = None if options.header_file is None else str(options.header_file)
    return RunOptions(options.check_samples, options.max_description_length, header)


def schema_builder(project: Any) -> Any:
    """The schema walker for a project: its PROJECT settings, and the built-in types of its Kubernetes version
    (PROJECT kubernetesVersion) for the ones its CRDs embed."""
    from pyop_scaffold.manifests.builtin import builtin_schema
    from pyop_scaffold.manifests.crd.schema import SchemaBuilder

    schema_source = functools.partial(builtin_schema, kubernetes_version=project.effective_kubernetes_version)
    embedded_object_meta = _settings(project).get("generateEmbeddedObjectMeta") is True
    return SchemaBuilder(schema_source, embedded_object_meta=embedded_object_meta)


def _settings(project: object) -> dict[str, Any]:
    """PROJECT's `manifests:` section (maxDescLen, headerFile, generateEmbeddedObjectMeta)."""
    section = (getattr(project, "model_extra", None) or {}).get("manifests") or {}
    if not isinstance(section, dict):
        raise ManifestError([f"PROJECT: manifests must be a mapping of options, not {section!r}"])
    known = {"maxDescLen", "headerFile", "generateEmbeddedObjectMeta"}
    unknown = sorted(set(section) - known)
    if unknown:
        raise ManifestError(
            [f"PROJECT: unknown manifests option(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"]
        )
    return section


def _int_setting(settings: dict[str, Any], name: str) -> int | None:
    value = settings.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ManifestError([f"PROJECT: manifests.{name} must be an integer, not {value!r}"])
    return value


def _header(root: Path, flag: Path | None, settings: dict[str, Any]) -> str:
    """The header comment of generated YAML files (controller-gen's headerFile): the file's text, `# `-prefixed
    where a line is not a comment already."""
    path = flag if flag is not None else settings.get("headerFile")
    if path is None:
        return ""
    file = Path(path) if Path(path).is_absolute() else root / path
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError([f"header file {path}: {exc.strerror or exc}"]) from None
    lines = [line if line.startswith("#") else (f"# {line}" if line else "#") for line in text.rstrip().splitlines()]
    return "\n".join(lines) + "\n" if lines else ""


def _check_compat(root: Path, ref: str, crds: list[dict[str, Any]]) -> str:
    """The breaking-change gate: every break against the previous CRDs is a line, and nothing is written."""
    from pyop_scaffold.manifests.compat import breaking_changes, load_baseline

    described, baseline = load_baseline(root, ref)
    breaks = breaking_changes(baseline, {crd["metadata"]["name"]: crd for crd in crds})
    if breaks:
        raise ManifestError([f"breaking change against {described}: {line}" for line in breaks])
    return f"no breaking change against {described} ({len(baseline)} CRD(s) compared)"


def _accept(crds: Iterable[dict[str, Any]], kinds: Any, root: Path) -> None:
    """The offline acceptance check: refuse CRDs the API server would reject, in its own words, each error at
    the file and line of the marker, field or class behind it."""
    from pyop_scaffold.manifests.acceptance import check_crd
    from pyop_scaffold.manifests.acceptance.sources import located_problems

    problems: list[str] = []
    for crd in crds:
        errors = check_crd(crd)
        if errors:
            problems.extend(located_problems(crd, errors, kinds, root))
    if problems:
        raise ManifestError(problems)


__all__ = ["ManifestOptions", "PyopError", "make_manifests"]
