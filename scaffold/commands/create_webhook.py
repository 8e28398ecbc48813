"""`pyop create webhook`: defaulting, validating and conversion webhooks for a kind made by `create api`.

What it writes follows Kubebuilder's `create webhook` (go/v4 + kustomize/v2 plugins), with pyop's rule that no
kustomize block needs uncommenting by hand: config/default gains the webhook Service, cert-manager's
certificate, the manager patch and the CA-injection replacements as soon as the project has a webhook.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyop_scaffold.commands import apiserver_config, project_files, webhook_certificates
from pyop_scaffold.commands.dependencies import add_dependency
from pyop_scaffold.commands.headers import kind_template_context
from pyop_scaffold.commands.project_files import read_text
from pyop_scaffold.commands.report import Report
from pyop_scaffold.commands.spoke_conversion import add_conversion_methods
from pyop_scaffold.edit.insertion import ensure_marker_above, insert_at_marker
from pyop_scaffold.edit.module_merge import MergeError, merge_module
from pyop_scaffold.edit.python_source import (
    add_class_base,
    add_comment_above_class,
    add_import,
    ensure_marker_in_call,
)
from pyop_scaffold.edit.yaml_edit import append_unique, merge_replacements
from pyop_scaffold.errors import ConflictError, UsageError
from pyop_scaffold.project import builtin_kinds, foreign_kinds
from pyop_scaffold.project.config import (
    PROJECT_FILE,
    Project,
    ResourceEntry,
    WebhookSettings,
    dump_project,
    load_project,
)
from pyop_scaffold.project.foreign_kinds import ExternalFlags, ForeignKind
from pyop_scaffold.project.layout import KindLayout
from pyop_scaffold.project.names import (
    validate_group,
    validate_kind,
    validate_plural,
    validate_version,
    validate_webhook_path,
)
from pyop_scaffold.render.changeset import ChangeSet
from pyop_scaffold.render.lock import holding_project_lock
from pyop_scaffold.render.python_literal import import_sections, python_literal
from pyop_scaffold.render.templates import render_template

DEFAULT_KUSTOMIZATION = "config/default/kustomization.yaml"
CRD_KUSTOMIZATION = "config/crd/kustomization.yaml"
WEBHOOK_KUSTOMIZATION = "config/webhook/kustomization.yaml"
NETWORK_POLICY_KUSTOMIZATION = "config/network-policy/kustomization.yaml"
STORAGE_VERSION_MARKER = "# +kubebuilder:storageversion"

# The files shared by every webhook of the project: written once, then the user's.
SHARED_FILES = {
    "config/webhook/kustomization.yaml": "webhook_kustomization.yaml",
    "config/webhook/service.yaml": "webhook_service.yaml",
    "config/certmanager/issuer.yaml": "certmanager_issuer.yaml",
    "config/certmanager/certificate-webhook.yaml": "certmanager_certificate_webhook.yaml",
    "config/certmanager/kustomization.yaml": "certmanager_kustomization.yaml",
    "config/certmanager/kustomizeconfig.yaml": "certmanager_kustomizeconfig.yaml",
    "config/default/manager_webhook_patch.yaml": "manager_webhook_patch.yaml",
    "config/network-policy/allow-webhook-traffic.yaml": "allow_webhook_traffic.yaml",
}

WEBHOOK_FLAGS = """\
parser.add_argument(
    "--webhook-cert-path",
    default="",
    help="Folder holding the webhook server certificate (default: /tmp/k8s-webhook-server/serving-certs).",
)
parser.add_argument("--webhook-cert-name", default="tls.crt", help="File name of the webhook certificate.")
parser.add_argument("--webhook-cert-key", default="tls.key", help="File name of the webhook certificate's key.")
parser.add_argument("--webhook-port", type=int, default=9443, help="Port the webhook server listens on.")"""

WEBHOOK_OPTIONS = """\
webhook_port=args.webhook_port,
webhook_cert_path=args.webhook_cert_path,
webhook_cert_name=args.webhook_cert_name,
webhook_key_name=args.webhook_cert_key,"""

REPLACEMENTS_COMMENT = (
    "The webhooks' serving certificate (config/certmanager): its DNS names come from the webhook Service, and\n"
    "cert-manager injects its CA into every webhook configuration and converting CRD listed below."
)


@dataclass(frozen=True)
class CreateWebhookOptions:
    group: str
    version: str
    kind: str
    plural: str | None = None
    defaulting: bool = False
    validation: bool = False
    conversion: bool = False
    spokes: tuple[str, ...] = ()
    defaulting_path: str | None = None
    validation_path: str | None = None
    force: bool = False
    external: ExternalFlags = ExternalFlags()
    certificates: str | None = None  # cert-manager or pyop (webhook_certificates.py); None: the project's


@holding_project_lock
def create_webhook(root: Path, options: CreateWebhookOptions) -> Report:
    root = root.resolve()
    group = validate_group(options.group)
    version = validate_version(options.version)
    kind = validate_kind(options.kind)
    _check_flags(options)
    spokes = _spokes(options, version)
    if options.conversion and not spokes:
        raise UsageError(
            f"invalid --conversion without --spoke: name the versions that convert to and from the hub "
            f"{version!r}, e.g. --spoke v2"
        )
    project = load_project(root)
    foreign = foreign_kinds.resolve(
        project,
        group,
        version,
        kind,
        scaffolds_api=False,
        external=options.external,
        plural=validate_plural(options.plural) if options.plural else None,
    )
    external_notes = (
        foreign_kinds.check_external_module(root, foreign) if foreign is not None and options.external.path else []
    )
    if foreign is not None and options.conversion:
        what = "built-in" if foreign.core else "external"
        raise UsageError(
            f"invalid --conversion for the {what} kind {group}/{version}, Kind={kind}: its versions are converted "
            "by the API server that serves it, not by this project"
        )
    entry = _foreign_entry(project, foreign) if foreign is not None else _existing_api(project, group, version, kind)
    plural = foreign.plural if foreign is not None else _plural(entry, options)
    for spoke in spokes:
        sibling = project.find(group, spoke, kind)
        if sibling is None or sibling.api is None:
            raise UsageError(
                f"invalid --spoke {spoke!r}: {group}/{spoke}, Kind={kind} has no API in PROJECT; create it first "
                f"with `pyop create api --group {group} --version {spoke} --kind {kind}`"
            )
    if options.conversion:
        _check_single_hub(project, entry)
    if not options.force:
        _check_not_scaffolded(entry, options)

    settings = _merged_settings(entry.webhooks, options, spokes)
    if foreign is not None:
        layout = foreign.layout(project)
    else:
        layout = KindLayout(project, group, version, kind, plural, api_package=entry.path)
    changes = ChangeSet(root, force=options.force)
    context = _context(root, project, layout, settings, foreign)
    rendered = render_template("webhook", context)
    # A kind that has webhooks gains the new ones inside its existing module and test (the user's code stays);
    # only --force rewrites them whole.
    merge = entry.webhooks is not None and not options.force
    base = (
        render_template("webhook", _context(root, project, layout, entry.webhooks, foreign))
        if merge and entry.webhooks is not None
        else None
    )
    _plan_code(changes, layout, rendered, base=base, added=_added_kinds(entry.webhooks, settings))
    _plan_main(changes, layout)
    notes = external_notes + _plan_makefile(changes, project.package)
    if foreign is not None and foreign.requirement is not None:
        notes += add_dependency(changes, foreign.requirement)
    certificates = webhook_certificates.choose(project, options.certificates)
    entry.webhooks = settings
    if certificates == webhook_certificates.PYOP:
        webhook_certificates.plan_kustomize(changes, project, rendered, settings)
        webhook_certificates.plan_main(changes, layout)
    else:
        _plan_kustomize(changes, project, rendered, settings)
    if settings.conversion:
        _plan_conversion(changes, layout, rendered, settings.spoke or [])
    changes.update_file(PROJECT_FILE, dump_project(project))
    if layout.webhook_file in changes.conflicts:
        chosen = [n for n, on in _kinds_of(settings) if on]
        raise ConflictError(
            f"{layout.webhook_file} already exists: pass --force to scaffold it again with {_listed(chosen)} "
            "webhooks (your changes to it are overwritten)"
        )

    report = Report(files=project_files.apply(changes), notes=notes)
    report.notes.append(
        "config/default deploys the webhooks with certificates the manager makes and rotates itself"
        if certificates == webhook_certificates.PYOP
        else "config/default deploys the webhooks with a cert-manager certificate: install cert-manager in the cluster"
    )
    report.next_step = f"implement the webhook in {layout.webhook_file}, then run: make manifests"
    return report


def _kinds_of(settings: WebhookSettings) -> list[tuple[str, bool]]:
    return [
        ("defaulting", bool(settings.defaulting)),
        ("validation", bool(settings.validation)),
        ("conversion", bool(settings.conversion)),
    ]


def _check_flags(options: CreateWebhookOptions) -> None:
    if not (options.defaulting or options.validation or options.conversion):
        raise UsageError(
            "no webhook chosen: pass at least one of --defaulting, --programmatic-validation, --conversion"
        )
    if options.spokes and not options.conversion:
        raise UsageError(f"invalid --spoke {','.join(options.spokes)!r}: spokes are only for --conversion")
    if options.defaulting_path is not None:
        if not options.defaulting:
            raise UsageError(f"invalid --defaulting-path {options.defaulting_path!r}: only with --defaulting")
        validate_webhook_path(options.defaulting_path, "--defaulting-path")
    if options.validation_path is not None:
        if not options.validation:
            raise UsageError(
                f"invalid --validation-path {options.validation_path!r}: only with --programmatic-validation"
            )
        validate_webhook_path(options.validation_path, "--validation-path")


def _spokes(options: CreateWebhookOptions, hub: str) -> list[str]:
    spokes: list[str] = []
    for raw in options.spokes:
        for spoke in (s.strip() for s in raw.split(",")):
            if not spoke:
                continue
            try:
                validate_version(spoke)
            except UsageError:
                raise UsageError(f"invalid --spoke {spoke!r}: must be a version like v2, v1alpha1 or v2beta3") from None
            if spoke == hub:
                raise UsageError(f"invalid --spoke {spoke!r}: it is the hub version (--version); spokes are the others")
            if spoke not in spokes:
                spokes.append(spoke)
    return spokes


def _existing_api(project: Project, group: str, version: str, kind: str) -> ResourceEntry:
    """Webhooks need the kind's model: Kubebuilder requires the API to exist unless it is external."""
    entry = project.find(group, version, kind)
    if entry is None or entry.api is None:
        raise UsageError(
            f"unknown kind {group}/{version}, Kind={kind}: not an API of this project, a built-in kind (--group core, "
            "apps, batch, ...) or an external one (--external-api-path); create it first with "
            f"`pyop create api --group {group} --version {version} --kind {kind}`"
        )
    return entry


def _foreign_entry(project: Project, foreign: ForeignKind) -> ResourceEntry:
    """The PROJECT entry of a built-in or external kind, added when the webhook is the first thing scaffolded for it
    (Kubebuilder's `core: true` / `external: true` resources)."""
    entry = project.find(foreign.group, foreign.version, foreign.kind)
    if entry is None:
        entry = ResourceEntry(group=foreign.group, version=foreign.version, kind=foreign.kind)
        project.resources.append(entry)
    foreign.record(entry)
    return entry


def _plural(entry: ResourceEntry, options: CreateWebhookOptions) -> str:
    from pyop.api.naming import default_plural

    known = entry.plural or default_plural(entry.kind)
    if options.plural is not None and validate_plural(options.plural) != known:
        raise UsageError(f"invalid plural {options.plural!r}: {entry.group}/{entry.kind} was created with {known!r}")
    return known


def _check_single_hub(project: Project, entry: ResourceEntry) -> None:
    """Every version of a kind converts through one hub; a second one would split the kind's versions."""
    for sibling in project.kinds_of(entry.group, entry.kind):
        if sibling.version != entry.version and sibling.webhooks is not None and sibling.webhooks.conversion:
            raise UsageError(
                f"invalid --conversion for {entry.group}/{entry.version}, Kind={entry.kind}: version "
                f"{sibling.version} is already the hub of {entry.group}/{entry.kind}; add spokes there instead"
            )


def _check_not_scaffolded(entry: ResourceEntry, options: CreateWebhookOptions) -> None:
    existing = entry.webhooks or WebhookSettings()
    gvk = f"{entry.group}/{entry.version}, Kind={entry.kind}"
    for asked, has, what in (
        (options.defaulting, existing.defaulting, "defaulting"),
        (options.validation, existing.validation, "validation"),
        (options.conversion, existing.conversion, "conversion"),
    ):
        if asked and has:
            raise ConflictError(f"{what} webhook for {gvk} already exists: pass --force to scaffold it again")


def _merged_settings(
    existing: WebhookSettings | None, options: CreateWebhookOptions, spokes: list[str]
) -> WebhookSettings:
    """What the kind has after this command: what it had plus what was asked (a rerun never drops a webhook)."""
    old = existing or WebhookSettings()
    all_spokes = list(old.spoke or [])
    all_spokes += [s for s in spokes if s not in all_spokes]
    return WebhookSettings(
        webhookVersion=old.webhook_version or "v1",
        defaulting=(options.defaulting or bool(old.defaulting)) or None,
        validation=(options.validation or bool(old.validation)) or None,
        conversion=(options.conversion or bool(old.conversion)) or None,
        spoke=all_spokes or None,
        defaultingPath=options.defaulting_path or old.defaulting_path,
        validationPath=options.validation_path or old.validation_path,
        **(old.model_extra or {}),
    )


def _context(
    root: Path, project: Project, layout: KindLayout, settings: WebhookSettings, foreign: ForeignKind | None
) -> dict[str, Any]:
    spokes = settings.spoke or []
    admission = bool(settings.defaulting or settings.validation)
    module_third = ["from pyop.manager import Manager"]
    module_third += ["from pyop.webhook import Warnings"] if settings.validation else []
    test_third = ["import pytest"] if admission else []
    test_third += [] if foreign is not None else ["import yaml"]
    test_third += ["from pyop.manager import Manager, ManagerOptions"]
    if admission:
        test_third += ["from pyop.manager.certificates import write_self_signed_certificate"]
        test_third += ["from pyop.testing import TestAPIServer"]
    model_first: list[str]
    model_third: list[str]
    if foreign is None:
        model_first, model_third = _api_imports(layout, spokes).split("\n"), []
        sample, namespaced = "", _namespaced(project, layout)
    else:
        model_first, model_third = _model_import(root, foreign)
        sample, namespaced = _foreign_sample(foreign)
    test_first = [*model_first, _webhook_test_import(layout, settings)]
    return {
        "module_imports": import_sections(module_third + model_third, model_first),
        "test_imports": import_sections(test_third + model_third, test_first),
        "foreign": foreign is not None,
        "external": foreign is not None and not foreign.core,
        "sample_object": sample,
        "webhook_group": foreign.rbac_group if foreign is not None else layout.qualified_group,
        **kind_template_context(root, project, layout),
        "webhook_module": layout.webhook_module,
        "setup_function": layout.webhook_setup_function,
        "sample_file": layout.sample_file,
        "namespaced": namespaced,
        "defaulting": bool(settings.defaulting),
        "validation": bool(settings.validation),
        "conversion": bool(settings.conversion),
        "defaulting_path": settings.defaulting_path or layout.defaulting_path,
        "validation_path": settings.validation_path or layout.validation_path,
        "custom_defaulting_path": settings.defaulting_path is not None,
        "custom_validation_path": settings.validation_path is not None,
        "spokes": ",".join(spokes),
        "crd_name": layout.crd_name,
    }


def _model_import(root: Path, foreign: ForeignKind) -> tuple[list[str], list[str]]:
    """The import of a built-in or external kind's model, as (first-party, third-party) statements: ruff's isort
    counts a module found in the project folder as first-party, an installed one as third-party."""
    statement = f"from {foreign.model_module} import {foreign.kind}"
    top = foreign.model_module.partition(".")[0]
    local = (root / top).is_dir() or (root / f"{top}.py").is_file()
    return ([statement], []) if local else ([], [statement])


def _foreign_sample(foreign: ForeignKind) -> tuple[str, bool]:
    """The test's sample of a kind with no config/samples file (the smallest object its schema accepts), and its
    scope (an external kind's model is taken as namespaced, as most are)."""
    name = f"{foreign.kind.lower()}-sample"
    if foreign.builtin is not None:
        obj = builtin_kinds.minimal_object(foreign.builtin, name)
        namespaced = foreign.builtin.namespaced
    else:
        api_version = f"{foreign.api_group}/{foreign.version}"
        obj = {"apiVersion": api_version, "kind": foreign.kind, "metadata": {"name": name}}
        namespaced = True
    return python_literal(obj, prefix_width=len("SAMPLE = ")), namespaced


def _namespaced(project: Project, layout: KindLayout) -> bool:
    """The kind's scope as PROJECT records it (namespaced unless `create api --cluster-scoped` said otherwise)."""
    entry = project.find(layout.group, layout.version, layout.kind)
    return entry is None or entry.api is None or entry.api.namespaced


def _api_imports(layout: KindLayout, spokes: list[str]) -> str:
    """The kind's imports from the hub and spoke modules, in the order ruff's isort wants them (v2 before v10).

    Sorted here, not in the template: a hub whose module sorts after a spoke's (hub v2, spoke v1beta1; or a kind
    created before `pyop edit --multigroup` next to one created after) would otherwise fail the project's lint.
    """
    kind = layout.kind
    lines = [f"from {layout.types_module} import {kind}"]
    lines += [f"from {_sibling(layout, s).types_module} import {kind} as {kind}{s.capitalize()}" for s in spokes]
    return "\n".join(sorted(lines, key=_natural_key))


# The generated project's ruff line length (project_templates/init pyproject.toml).
PROJECT_LINE_LENGTH = 110


def _webhook_test_import(layout: KindLayout, settings: WebhookSettings) -> str:
    """The test's import of the webhook module, on one line or wrapped as ruff's isort writes it when too long."""
    names = [f"{layout.kind}Defaulter"] if settings.defaulting else []
    names += [f"{layout.kind}Validator"] if settings.validation else []
    names.append(layout.webhook_setup_function)
    line = f"from {layout.webhook_module} import {', '.join(names)}"
    if len(line) <= PROJECT_LINE_LENGTH:
        return line
    return f"from {layout.webhook_module} import (\n" + "".join(f"    {name},\n" for name in names) + ")"


def _natural_key(text: str) -> list[str | int]:
    """`p.api.v10` after `p.api.v2`: digit runs compare as numbers, as isort's natural order does."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _sibling(layout: KindLayout, version: str) -> KindLayout:
    """Another version of the kind, where PROJECT says its API is."""
    entry = layout.project.find(layout.group, version, layout.kind)
    path = entry.path if entry is not None else None
    return KindLayout(layout.project, layout.group, version, layout.kind, layout.plural, api_package=path)


def _added_kinds(before: WebhookSettings | None, after: WebhookSettings) -> list[str]:
    old = dict(_kinds_of(before or WebhookSettings()))
    return [name for name, on in _kinds_of(after) if on and not old[name]]


def _plan_code(
    changes: ChangeSet,
    layout: KindLayout,
    rendered: dict[str, bytes],
    *,
    base: dict[str, bytes] | None,
    added: list[str],
) -> None:
    """The kind's webhook module and test: written from the template, or, when the kind had webhooks (`base`: the
    files as the command wrote them then), the new parts merged into the user's copies."""
    package_dir = f"{layout.project.package}/webhook"
    _add_if_missing(changes, f"{package_dir}/__init__.py", rendered["package_init.py"])
    if layout.project.multigroup:
        _add_if_missing(changes, f"{layout.webhook_dir.rpartition('/')[0]}/__init__.py", rendered["package_init.py"])
    _add_if_missing(changes, f"{layout.webhook_dir}/__init__.py", rendered["package_init.py"])
    files = (
        (layout.webhook_file, "webhook.py", layout.webhook_setup_function),
        (layout.webhook_test_file, "webhook_test.py", None),
    )
    for path, template, chain in files:
        current = read_text(changes, path) if base is not None else None
        if current is None:
            changes.add_file(path, rendered[template])
            continue
        try:
            merged = merge_module(
                current,
                rendered[template].decode("utf-8"),
                source=path,
                first_party=layout.project.package,
                chain_function=chain,
                base=base[template].decode("utf-8") if base is not None else None,
            )
        except MergeError as exc:
            raise ConflictError(
                f"{exc}; or pass --force to rewrite {path} whole with the {_listed(added)} webhook "
                "(your changes to it are overwritten)"
            ) from None
        changes.update_file(path, merged)


def _listed(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0] if names else "same"


def _plan_main(changes: ChangeSet, layout: KindLayout) -> None:
    """Flags, manager options and the guarded setup call; insertion points missing from older projects are added."""
    path = layout.main_file
    main = read_text(changes, path)
    if main is None:
        raise UsageError(f"cannot register the webhook: {path} is missing")
    main = ensure_marker_above(main, "flags", "return parser.parse_args(argv)", source=path)
    main = ensure_marker_in_call(main, "ManagerOptions", "# +kubebuilder:scaffold:manageroptions", source=path)
    # Projects made before the webhooks insertion point: the calls go at the end of setup_controllers.
    main = ensure_marker_above(main, "webhooks", "# +kubebuilder:scaffold:builder", source=path)
    package, _, module = layout.webhook_module.rpartition(".")
    # Among the project's own imports (isort's first-party group), where ruff's import sorting expects it.
    statement = f"from {package} import {module} as {layout.webhook_alias}"
    main = add_import(main, statement, source=path, first_party=layout.project.package)
    main = insert_at_marker(main, "flags", WEBHOOK_FLAGS, source=path)
    main = insert_at_marker(main, "manageroptions", WEBHOOK_OPTIONS, source=path)
    call = (
        'if os.environ.get("ENABLE_WEBHOOKS") != "false":\n'
        f"    {layout.webhook_alias}.{layout.webhook_setup_function}(manager)"
    )
    main = insert_at_marker(main, "webhooks", call, source=path)
    changes.update_file(path, main)


def _plan_makefile(changes: ChangeSet, package: str) -> list[str]:
    """`make run` without webhooks, in Makefiles written before the init template had it."""
    text = read_text(changes, "Makefile")
    if text is None or "ENABLE_WEBHOOKS" in text:
        return []
    line = f"\t$(PYTHON) -m {package}.main\n"
    if line not in text:
        return ["set ENABLE_WEBHOOKS=false where your Makefile runs the manager locally (webhooks need certificates)"]
    changes.update_file("Makefile", text.replace(line, f"\tENABLE_WEBHOOKS=false $(PYTHON) -m {package}.main\n", 1))
    return []


def _plan_kustomize(
    changes: ChangeSet, project: Project, rendered: dict[str, bytes], settings: WebhookSettings
) -> None:
    for path, template in SHARED_FILES.items():
        _add_if_missing(changes, path, rendered[template])
    if settings.defaulting or settings.validation:
        # controller-gen's output; a project with only conversion webhooks has no webhook configuration.
        _append(changes, WEBHOOK_KUSTOMIZATION, "resources", ["manifests.yaml"])
    _append(changes, NETWORK_POLICY_KUSTOMIZATION, "resources", ["allow-webhook-traffic.yaml"])

    text = read_text(changes, DEFAULT_KUSTOMIZATION)
    if text is None:
        raise UsageError(
            f"cannot add to {DEFAULT_KUSTOMIZATION}: the file is missing (was the project made by `pyop init`?)"
        )
    for value in ("../webhook", "../certmanager"):
        if not any(line.strip() == f"- {value}" for line in text.splitlines()):
            text = insert_at_marker(text, "defaultresources", f"- {value}", source=DEFAULT_KUSTOMIZATION)
    changes.update_file(DEFAULT_KUSTOMIZATION, text)
    text = append_unique(
        text,
        "patches",
        [{"path": "manager_webhook_patch.yaml", "target": apiserver_config.manager_patch_target(project)}],
        source=DEFAULT_KUSTOMIZATION,
        comment="The manager serves the webhooks on :9443 with the certificate cert-manager issues.",
    )
    text = merge_replacements(text, _replacements(project), source=DEFAULT_KUSTOMIZATION, comment=REPLACEMENTS_COMMENT)
    changes.update_file(DEFAULT_KUSTOMIZATION, text)


def _replacements(project: Project) -> list[dict[str, Any]]:
    """Kubebuilder's [CERTMANAGER] replacements, with targets for the webhook kinds the project has."""
    from pyop.api.naming import default_plural

    certificate = {"kind": "Certificate", "group": "cert-manager.io", "version": "v1", "name": "serving-cert"}
    targets: list[dict[str, Any]] = []
    hooks = [r.webhooks for r in project.resources if r.webhooks is not None]
    if any(h.defaulting for h in hooks):
        targets.append({"select": {"kind": "MutatingWebhookConfiguration"}})
    if any(h.validation for h in hooks):
        targets.append({"select": {"kind": "ValidatingWebhookConfiguration"}})
    for resource in project.resources:
        if resource.webhooks is not None and resource.webhooks.conversion:
            crd = f"{resource.plural or default_plural(resource.kind)}.{resource.qualified_group}"
            targets.append({"select": {"kind": "CustomResourceDefinition", "name": crd}})

    def ca_targets(index: int) -> list[dict[str, Any]]:
        return [
            {
                **copy.deepcopy(target),
                "fieldPaths": [".metadata.annotations.[cert-manager.io/inject-ca-from]"],
                "options": {"delimiter": "/", "index": index, "create": True},
            }
            for target in targets
        ]

    def dns_targets(index: int) -> list[dict[str, Any]]:
        return [
            {
                "select": dict(certificate),
                "fieldPaths": [".spec.dnsNames.0", ".spec.dnsNames.1"],
                "options": {"delimiter": ".", "index": index, "create": True},
            }
        ]

    service = {"kind": "Service", "version": "v1", "name": "webhook-service"}
    return [
        {"source": {**service, "fieldPath": ".metadata.name"}, "targets": dns_targets(0)},
        {"source": {**service, "fieldPath": ".metadata.namespace"}, "targets": dns_targets(1)},
        {"source": {**certificate, "fieldPath": ".metadata.namespace"}, "targets": ca_targets(0)},
        {"source": {**certificate, "fieldPath": ".metadata.name"}, "targets": ca_targets(1)},
    ]


def _plan_conversion(changes: ChangeSet, layout: KindLayout, rendered: dict[str, bytes], spokes: list[str]) -> None:
    """The CRD patch and kustomize config, the hub marked, and conversion methods on each spoke's model."""
    changes.add_file(layout.conversion_patch_file, rendered["crd_conversion_patch.yaml"])
    _add_if_missing(changes, "config/crd/kustomizeconfig.yaml", rendered["crd_kustomizeconfig.yaml"])
    text = read_text(changes, CRD_KUSTOMIZATION)
    if text is None:
        raise UsageError(
            f"cannot add to {CRD_KUSTOMIZATION}: the file is missing (was the project made by `pyop init`?)"
        )
    text = append_unique(
        text,
        "patches",
        [{"path": layout.conversion_patch_file.removeprefix("config/crd/")}],
        source=CRD_KUSTOMIZATION,
        comment="Conversion webhooks (pyop create webhook --conversion) of the CRDs that have several versions.",
    )
    text = append_unique(text, "configurations", ["kustomizeconfig.yaml"], source=CRD_KUSTOMIZATION)
    changes.update_file(CRD_KUSTOMIZATION, text)

    hub_file = layout.types_file
    hub = _read_types(changes, hub_file)
    hub = add_import(hub, "from pyop.webhook import Hub", source=hub_file, first_party=layout.project.package)
    hub = add_class_base(hub, layout.kind, "Hub", source=hub_file)
    versions = [layout.version, *spokes]
    marked = any(STORAGE_VERSION_MARKER in _read_types(changes, _sibling(layout, v).types_file) for v in versions)
    if not marked:
        # Kubebuilder stores the hub: the version every other one converts through.
        hub = add_comment_above_class(hub, layout.kind, STORAGE_VERSION_MARKER, source=hub_file)
    changes.update_file(hub_file, hub)

    for spoke in spokes:
        spoke_layout = _sibling(layout, spoke)
        path = spoke_layout.types_file
        text = _read_types(changes, path)
        converting = add_conversion_methods(
            text,
            kind=layout.kind,
            spoke_version=spoke,
            hub_version=layout.version,
            hub_module=layout.types_module,
            package=layout.project.package,
            added_by="webhook",
            source=path,
        )
        if converting != text:
            changes.update_file(path, converting)


def _add_if_missing(changes: ChangeSet, path: str, content: bytes) -> None:
    """Files shared by every webhook of the project: written once, then the user's, even with --force."""
    if changes.read(path) is None:
        changes.add_file(path, content)


def _append(changes: ChangeSet, path: str, key: str, values: list[str]) -> None:
    text = read_text(changes, path)
    if text is None:
        raise UsageError(f"cannot add to {path}: the file is missing (was the project made by `pyop init`?)")
    changes.update_file(path, append_unique(text, key, values, source=path))


def _read_types(changes: ChangeSet, path: str) -> str:
    text = read_text(changes, path)
    if text is None:
        raise UsageError(f"cannot add conversion: {path} is missing (was the API made by `pyop create api`?)")
    return text
