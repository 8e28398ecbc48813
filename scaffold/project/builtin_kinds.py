"""Built-in Kubernetes kinds as `create api` and `create webhook` name them: `--group core|apps|batch|networking ...`.

Kubebuilder treats a group it knows as Kubernetes' own (`core`, `apps`, `batch`, `networking` with domain `k8s.io`
...) when the command scaffolds no API for it: the kind is not the project's, PROJECT records it with `core: true`
and the path of its types, and the controller imports those. pyop's types are the generated models of
`pyop.api.k8s` (or of the project's own `<package>.k8s` for another Kubernetes version: `builtin_models`), so the
kinds a built-in group has are read from their index (`pyop.api.k8s._index.ROOT_KINDS`, or the generator's for
that version), not from a second hand-written table: a kind that is not there is refused with the spellings that
are.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pyop_scaffold.errors import UsageError
from pyop_scaffold.project.builtin_models import ModelsPackage, bundled

K8S_DOMAIN = "k8s.io"


@dataclass(frozen=True)
class BuiltinKind:
    """One root kind of the bundled definitions, with the names PROJECT and the scaffolds use for it."""

    group: str  # as PROJECT records it: `core`, `apps`, `networking`, `rbac.authorization` (Kubebuilder's)
    domain: str | None  # `k8s.io` for `*.k8s.io` groups, none for `core`, `apps`, `batch` ...
    api_group: str  # as the API server names it: "", `apps`, `networking.k8s.io`
    version: str
    kind: str
    plural: str
    namespaced: bool
    module: str  # `pyop.api.k8s.core.v1`: where the kind's model is imported from
    kubernetes_version: str  # whose definitions describe it

    @property
    def rbac_group(self) -> str:
        """The group as `+kubebuilder:rbac` and `+kubebuilder:webhook` markers spell it (`core` for "")."""
        return self.api_group or "core"


def _root_kinds(models: ModelsPackage) -> tuple[tuple[str, str, str, str, bool, str], ...]:
    """(group, version, kind, plural, namespaced, group/version package) of every root kind of the models."""
    if not models.generated_by_project:
        from pyop.api.k8s._index import ROOT_KINDS

        return ROOT_KINDS
    from pyop_scaffold.codegen.k8s_models import Generator

    generator = Generator(models.kubernetes_version, models.package)
    return tuple((*generator.roots[d], generator.refs[d].package) for d in sorted(generator.roots))


@functools.cache
def _kinds(models: ModelsPackage) -> tuple[BuiltinKind, ...]:
    kinds = []
    for api_group, version, kind, plural, namespaced, package in _root_kinds(models):
        if package.startswith("meta."):
            continue
        if api_group == "":
            group, domain = "core", None
        elif api_group.endswith("." + K8S_DOMAIN):
            group, domain = api_group.removesuffix("." + K8S_DOMAIN), K8S_DOMAIN
        else:
            group, domain = api_group, None
        kinds.append(
            BuiltinKind(
                group,
                domain,
                api_group,
                version,
                kind,
                plural,
                namespaced,
                models.module(package),
                models.kubernetes_version,
            )
        )
    return tuple(kinds)


def _package_of(kind: BuiltinKind) -> str:
    """`apps` of `pyop.api.k8s.apps.v1` (the short group name)."""
    return kind.module.rsplit(".", 2)[-2]


@functools.cache
def _spellings(models: ModelsPackage) -> dict[str, str]:
    """Every accepted `--group` spelling -> PROJECT's group: `rbac`, `rbac.authorization` and
    `rbac.authorization.k8s.io` all name one group; `core` is the core group "" (as in Kubebuilder)."""
    names: dict[str, str] = {}
    for kind in _kinds(models):
        package = _package_of(kind)
        for spelling in (package, kind.group, kind.api_group):
            if spelling:
                names.setdefault(spelling, kind.group)
    return names


def builtin_group(group: str, models: ModelsPackage | None = None) -> str | None:
    """PROJECT's name of the built-in group `group` spells, or None when it is not a Kubernetes group."""
    return _spellings(models or bundled()).get(group)


def group_spellings(models: ModelsPackage | None = None) -> list[str]:
    """The short `--group` names of the built-in groups (one per group), sorted."""
    return sorted({_package_of(k) for k in _kinds(models or bundled())})


def find_builtin_kind(group: str, version: str, kind: str, models: ModelsPackage | None = None) -> BuiltinKind:
    """The built-in kind `--group/--version/--kind` name; a one-line error naming what exists when it does not.
    ``models``: the project's (`builtin_models.models_of`), by default pyop's own."""
    models = models or bundled()
    canonical = builtin_group(group, models)
    if canonical is None:
        raise UsageError(
            f"invalid group {group!r}: not a built-in Kubernetes group; built-in groups are "
            f"{', '.join(group_spellings(models))}"
        )
    in_group = [k for k in _kinds(models) if k.group == canonical]
    for candidate in in_group:
        if (candidate.version, candidate.kind) == (version, kind):
            return candidate
    versions = sorted({k.version for k in in_group})
    if version not in versions:
        raise UsageError(
            f"invalid version {version!r} for built-in group {group!r}: the Kubernetes {models.kubernetes_version} "
            f"definitions have {', '.join(versions)}"
        )
    kinds = sorted(k.kind for k in in_group if k.version == version)
    raise UsageError(
        f"invalid kind {kind!r}: built-in group {group}/{version} has no such kind; its kinds are {', '.join(kinds)}"
    )


def has_status(builtin: BuiltinKind) -> bool:
    """Whether the kind has a `status` (so its controller may need the `/status` subresource), read from its
    definition rather than by importing its model (building a large model costs more than the whole scaffold)."""
    return "status" in (_definition(builtin).get("properties") or {})


def _definition(builtin: BuiltinKind) -> Mapping[str, Any]:
    from pyop.api.definitions import definition_for_kind, load_definitions

    version = builtin.kubernetes_version
    return load_definitions(version)[definition_for_kind(builtin.api_group, builtin.version, builtin.kind, version)]


def minimal_object(builtin: BuiltinKind, name: str) -> dict[str, object]:
    """The smallest object of the kind the API server admits: every field its OpenAPI definition requires,
    recursively, with a placeholder value, plus what kube-apiserver's validation requires beyond the schema
    (`_VALIDATION_EXTRAS`, and a workload's selector matching its template's labels). Scaffolded tests start from
    it; the user fills in the rest. Deterministic: built from the kind's version's definitions only."""
    from pyop.api.definitions import load_definitions

    definitions = load_definitions(builtin.kubernetes_version)
    schema = _definition(builtin)
    obj: dict[str, object] = {
        "apiVersion": f"{builtin.api_group}/{builtin.version}" if builtin.api_group else builtin.version,
        "kind": builtin.kind,
        "metadata": {"name": name},
    }
    properties = schema.get("properties") or {}
    for field in [*(schema.get("required") or ()), "spec"]:
        if field in obj or field not in properties:
            continue
        value = _placeholder(properties[field], definitions, name, 0)
        if field in (schema.get("required") or ()) or value:  # an optional spec only when validation needs one
            obj[field] = value
    return obj


_CONTAINERS: Final = [{"name": "app", "image": "busybox:1.36"}]

# What kube-apiserver's validation (pkg/apis/<group>/validation) requires of these definitions beyond their
# OpenAPI `required` lists; without it a sample Pod, workload, Job, CronJob or Service is refused with a 422.
_JOB_POD: Final = {"spec": {"containers": _CONTAINERS, "restartPolicy": "Never"}}
_VALIDATION_EXTRAS: Final[dict[str, dict[str, Any]]] = {
    "io.k8s.api.core.v1.PodSpec": {"containers": _CONTAINERS},
    "io.k8s.api.core.v1.PodTemplateSpec": {"spec": {"containers": _CONTAINERS}},
    "io.k8s.api.core.v1.ServiceSpec": {"ports": [{"port": 80}]},
    "io.k8s.api.batch.v1.JobSpec": {"template": _JOB_POD},
    "io.k8s.api.batch.v1.JobTemplateSpec": {"spec": {"template": _JOB_POD}},
    "io.k8s.api.batch.v1.CronJobSpec": {"schedule": "*/5 * * * *"},
}
_LABEL_SELECTOR: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"
_POD_TEMPLATE: Final = "io.k8s.api.core.v1.PodTemplateSpec"


def _placeholder(schema: Mapping[str, Any], definitions: Mapping[str, Any], name: str, depth: int) -> object:
    from pyop.api.definitions import reference_target

    ref = schema.get("$ref") or next((s.get("$ref") for s in schema.get("allOf") or () if "$ref" in s), None)
    target = reference_target(ref) if ref is not None else ""
    if target:
        schema = definitions[target]
    if schema.get("enum"):
        return sorted(schema["enum"])[0]
    kind = schema.get("type")
    if kind == "array":
        return [_placeholder(schema.get("items") or {}, definitions, name, depth + 1)] if depth < 8 else []
    if kind == "integer" or kind == "number":
        return 1
    if kind == "boolean":
        return False
    if kind == "string" or "format" in schema or depth >= 8:
        return name
    properties = schema.get("properties") or {}
    required = schema.get("required") or ()
    value: dict[str, Any] = {
        field: _placeholder(properties.get(field) or {}, definitions, name, depth + 1) for field in required
    }
    if "selector" in required and _refers_to(properties.get("template"), _POD_TEMPLATE):
        # A workload: its selector must select the pods its template makes.
        value["selector"] = {"matchLabels": {"app": name}}
        template = _placeholder(properties["template"], definitions, name, depth + 1)
        rest = {k: v for k, v in template.items() if k != "metadata"} if isinstance(template, dict) else {}
        value["template"] = {"metadata": {"labels": {"app": name}}, **rest}
    for field, extra in _VALIDATION_EXTRAS.get(target, {}).items():
        value[field] = _merged(value.get(field), extra)
    return value


def _refers_to(schema: Mapping[str, Any] | None, definition: str) -> bool:
    refs = [(schema or {}).get("$ref"), *((s or {}).get("$ref") for s in (schema or {}).get("allOf") or ())]
    return any(isinstance(ref, str) and ref.endswith("/" + definition) for ref in refs)


def _merged(value: Any, extra: Any) -> Any:
    if isinstance(value, dict) and isinstance(extra, dict):
        return {**value, **{k: _merged(value.get(k), v) for k, v in extra.items()}}
    return extra
