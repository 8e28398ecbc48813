"""Kinds a project reconciles or admits but does not define: built-in ones (`--group core|apps|batch ...`) and
external ones (`--external-api-path`), decided as Kubebuilder decides them (pkg/plugins/golang/options.go).

- `--external-api-path` names the Python module of a third-party kind's models (`certmanager_models.v1`);
  `--external-api-domain` its domain (the API group is `<group>.<domain>`); `--external-api-module` the requirement
  that installs that module (`certmanager-models>=1.20`, PEP 508: the Python counterpart of Kubebuilder's
  `<go module>@<version>`), added to the project's dependencies.
- Otherwise, a kind PROJECT already records keeps what it recorded; a command that scaffolds no API for a kind of a
  built-in group (`core`, `apps`, `networking` ...) means the built-in kind, imported from `pyop.api.k8s`.
- Anything else is the project's own kind.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pyop_scaffold.errors import UsageError
from pyop_scaffold.project import builtin_kinds, builtin_models, names
from pyop_scaffold.project.config import Project, ResourceEntry
from pyop_scaffold.project.layout import KindLayout


@dataclass(frozen=True)
class ExternalFlags:
    """The `--external-api-*` flags of `create api` and `create webhook` (None: not given)."""

    path: str | None = None
    domain: str | None = None
    module: str | None = None


@dataclass(frozen=True)
class ForeignKind:
    """A kind the project does not define, with what PROJECT and the scaffolds need of it."""

    group: str
    domain: str | None
    api_group: str  # as the API server names it ("" for core)
    version: str
    kind: str
    plural: str
    model_module: str  # where the kind's model is imported from
    core: bool
    requirement: str | None = None  # external only: the distribution that installs model_module
    builtin: builtin_kinds.BuiltinKind | None = None

    @property
    def rbac_group(self) -> str:
        """The group as `+kubebuilder:rbac`/`+kubebuilder:webhook` markers spell it (`core` for "")."""
        return self.api_group or "core"

    def layout(self, project: Project) -> KindLayout:
        return KindLayout(
            project,
            self.group,
            self.version,
            self.kind,
            self.plural,
            api_group=self.api_group,
            model_module=self.model_module,
        )

    def record(self, entry: ResourceEntry) -> None:
        """Write Kubebuilder's fields for the kind into its PROJECT entry."""
        from pyop.api.naming import default_plural

        entry.domain = self.domain
        entry.path = self.model_module
        entry.core = True if self.core else None
        entry.external = None if self.core else True
        if self.requirement is not None:
            entry.module = self.requirement
        if not self.core and self.plural != default_plural(self.kind):
            entry.plural = self.plural


def check_external_flags(flags: ExternalFlags) -> None:
    """The flags alone: values well-formed, domain and module only with a path."""
    if flags.path is None:
        for flag, value in (("--external-api-domain", flags.domain), ("--external-api-module", flags.module)):
            if value is not None:
                raise UsageError(f"invalid {flag} {value!r}: only with --external-api-path (the models' module)")
        return
    names.validate_import_path(flags.path, "--external-api-path")
    if flags.path.split(".")[0] == "pyop":
        raise UsageError(
            f"invalid --external-api-path {flags.path!r}: pyop's own models are built-in kinds; pass their group "
            "(e.g. --group apps) without --external-api-path"
        )
    if flags.domain is not None:
        names.validate_domain(flags.domain)
    if flags.module is not None:
        validate_requirement(flags.module)


def validate_requirement(value: str) -> str:
    """A PEP 508 requirement (`certmanager-models>=1.20`), as pyproject.toml's dependencies take it."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        Requirement(value)
    except InvalidRequirement:
        raise UsageError(
            f"invalid --external-api-module {value!r}: must be a Python requirement (PEP 508), e.g. "
            "'certmanager-models>=1.20'"
        ) from None
    if "\n" in value or '"' in value:
        raise UsageError(f"invalid --external-api-module {value!r}: one line, without double quotes")
    return value


def resolve(
    project: Project,
    group: str,
    version: str,
    kind: str,
    *,
    scaffolds_api: bool,
    external: ExternalFlags,
    plural: str | None,
) -> ForeignKind | None:
    """The kind `--group/--version/--kind` names if the project does not define it, else None."""
    from pyop.api.naming import default_plural

    check_external_flags(external)
    entry = project.find(group, version, kind)
    if external.path is not None:
        if scaffolds_api:
            raise UsageError(
                f"invalid --external-api-path {external.path!r}: an external kind has no API in this project; "
                "pass --resource=false"
            )
        if entry is not None and entry.owned and entry.api is not None:
            raise UsageError(
                f"invalid --external-api-path {external.path!r}: {group}/{version}, Kind={kind} is an API of this "
                "project"
            )
        api_group = f"{group}.{external.domain}" if external.domain else group
        return ForeignKind(
            group=group,
            domain=external.domain,
            api_group=api_group,
            version=version,
            kind=kind,
            plural=plural or (entry.plural if entry is not None and entry.plural else None) or default_plural(kind),
            model_module=external.path,
            core=False,
            requirement=external.module,
        )
    models = builtin_models.models_of(project)
    if entry is not None and not entry.owned:
        return from_entry(entry, models)
    if scaffolds_api or (entry is not None and entry.api is not None):
        return None
    if builtin_kinds.builtin_group(group, models) is None:
        return None
    builtin = builtin_kinds.find_builtin_kind(group, version, kind, models)
    if plural is not None and plural != builtin.plural:
        raise UsageError(f"invalid plural {plural!r}: the built-in {builtin.group}/{kind} is {builtin.plural!r}")
    return ForeignKind(
        group=builtin.group,
        domain=builtin.domain,
        api_group=builtin.api_group,
        version=version,
        kind=kind,
        plural=builtin.plural,
        model_module=builtin.module,
        core=True,
        builtin=builtin,
    )


def from_entry(entry: ResourceEntry, models: builtin_models.ModelsPackage) -> ForeignKind:
    """A built-in or external kind as PROJECT records it (a built-in one imported from the project's ``models``)."""
    from pyop.api.naming import default_plural

    if entry.core:
        builtin = builtin_kinds.find_builtin_kind(entry.group, entry.version, entry.kind, models)
        return ForeignKind(
            group=builtin.group,
            domain=builtin.domain,
            api_group=builtin.api_group,
            version=entry.version,
            kind=entry.kind,
            plural=builtin.plural,
            model_module=builtin.module,
            core=True,
            builtin=builtin,
        )
    if entry.path is None:
        raise UsageError(
            f"invalid PROJECT entry {entry.group}/{entry.version}, Kind={entry.kind}: external: true needs the path "
            "of the kind's models"
        )
    return ForeignKind(
        group=entry.group,
        domain=entry.domain,
        api_group=entry.qualified_group,
        version=entry.version,
        kind=entry.kind,
        plural=entry.plural or default_plural(entry.kind),
        model_module=entry.path,
        core=False,
        requirement=entry.module,
    )


def check_external_module(root: Path, foreign: ForeignKind) -> list[str]:
    """Whether `--external-api-path` names a module that defines the kind, checked where the project runs
    (its root on the path, as `make manifests` imports it), before anything is written.

    A module that cannot be found is an error unless `--external-api-module` names the requirement that will
    install it (then a note says to install it); a module that is found must import and define the kind's class.
    """
    if foreign.core:
        return []
    path = foreign.model_module
    with _importable_from(root):
        try:
            spec = importlib.util.find_spec(path)
        except (ImportError, ValueError):  # a parent package is missing or broken
            spec = None
        if spec is None:
            if foreign.requirement is not None:
                return [f"{path} is not importable here yet: install {foreign.requirement!r} before make manifests"]
            raise UsageError(
                f"invalid --external-api-path {path!r}: no module of that name can be imported here; install the "
                "package that provides it, or name it with --external-api-module"
            )
        try:
            module = importlib.import_module(path)
        except Exception as exc:  # the third-party module's own error, whatever it is
            reason = (str(exc).splitlines() or [""])[0]
            raise UsageError(
                f"invalid --external-api-path {path!r}: importing it failed: {type(exc).__name__}: {reason}"
            ) from None
    model = getattr(module, foreign.kind, None)
    if not isinstance(model, type):
        from pydantic import BaseModel

        classes = sorted(
            name for name, value in vars(module).items() if isinstance(value, type) and issubclass(value, BaseModel)
        )
        has = f"its models are {', '.join(classes)}" if classes else "it defines no pydantic models"
        raise UsageError(f"invalid --kind {foreign.kind!r}: {path} has no class {foreign.kind}; {has}")
    return []


@contextlib.contextmanager
def _importable_from(root: Path) -> Iterator[None]:
    """`root` first on the module path for the duration; modules imported meanwhile are forgotten afterwards."""
    before = set(sys.modules)
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(root))
        for name in set(sys.modules) - before:
            del sys.modules[name]
