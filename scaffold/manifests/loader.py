"""Importing a project's API modules, as controller-gen loads Go packages, and finding the kinds in them.

The project's package is imported from the project folder and removed from `sys.modules` afterwards, so several
projects with the same package name can be generated in one process (the test suite does) and a re-run sees edits.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import sys
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyop.api.naming import json_name
from pyop_scaffold.errors import PyopError
from pyop_scaffold.manifests.crd.schema import class_docs, package_markers
from pyop_scaffold.manifests.errors import (
    DEBUG_HINT,
    ManifestError,
    MarkerError,
    SourceLocation,
    describe_exception,
    location_in,
)
from pyop_scaffold.manifests.markers.comments import DISPLAY_ROOT, DocBlock
from pyop_scaffold.manifests.markers.parser import ParsedMarker

if TYPE_CHECKING:
    from pydantic import BaseModel

    from pyop.api import ResourceInfo


@dataclass(frozen=True)
class KindVersion:
    """One version of a kind: the root model class, the markers written above it, and its group and version."""

    cls: type
    docs: DocBlock
    source: str
    info: ResourceInfo


@contextlib.contextmanager
def imported_project(root: Path, package: str) -> Iterator[None]:
    """Make `package` importable from `root` for the duration, then forget every module of it."""
    root_str = str(root)
    saved = {name: mod for name, mod in sys.modules.items() if _belongs(name, package)}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, root_str)
    importlib.invalidate_caches()
    token = DISPLAY_ROOT.set(root)
    try:
        with _deferred_validators(), _cyclic_collection_paused(), _annotations_compiled_once():
            yield
    finally:
        DISPLAY_ROOT.reset(token)
        with contextlib.suppress(ValueError):
            sys.path.remove(root_str)
        for name in [n for n in sys.modules if _belongs(n, package)]:
            del sys.modules[name]
        sys.modules.update(saved)


@contextlib.contextmanager
def _cyclic_collection_paused() -> Iterator[None]:
    """No cyclic garbage collection while the project is imported and its schemas are built.

    That allocates a few hundred thousand long-lived objects (classes, fields, schema nodes) and almost no garbage
    cycles, so each full collection walks an ever larger heap to free nothing: a tenth of `make manifests`.
    Reference counting frees everything else as usual. Afterwards the objects made meanwhile go straight to the
    oldest generation (`freeze` then `unfreeze` moves every tracked object there without walking any), so the
    young-generation collections that resume do not walk them all once more; the next full collection, which
    the heap's growth no longer hastens, still frees whatever cycles they hold.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:  # nobody else keeps objects frozen: ours to use
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def _annotations_compiled_once() -> Iterator[None]:
    """Each distinct string annotation compiled once while the project is imported, not once per field.

    With `from __future__ import annotations`, pydantic evaluates every field's annotation through
    `typing.ForwardRef`, whose constructor compiles the string; a project's 200 kinds repeat the same few hundred
    annotations (`Int32`, `str | None`, ...) ten thousand times, and compiling was ~4% of `make manifests`. Code
    objects are immutable, so one per (source, filename, mode) is the same code. The memo is `typing`'s own name
    `compile` (shadowing the builtin for that module only) and is removed afterwards.
    """
    if "compile" in vars(typing):  # someone else shadows it already: leave theirs alone
        yield
        return
    typing.compile = functools.lru_cache(maxsize=8192)(compile)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del typing.compile  # type: ignore[attr-defined]


@contextlib.contextmanager
def _deferred_validators() -> Iterator[None]:
    """While the project is imported for generation, its models skip building their pydantic validators (and
    compute their camelCase aliases once per field name).

    Building validators is most of the cost of importing a model class, and generating manifests needs only the
    fields (`model_fields`), which pydantic collects either way (`defer_build`). A new class takes the config of
    its bases, so pyop's base models (KubeModel, Resource, ResourceList...) say `defer_build` for the duration.
    The imported modules are forgotten afterwards, so no model built this way ever validates anything.
    """
    from pyop.api import KubeModel

    bases: list[type[BaseModel]] = [KubeModel, *_pyop_subclasses(KubeModel)]
    saved = [{name: cls.model_config.get(name, _UNSET) for name in ("defer_build", "alias_generator")} for cls in bases]
    for cls in bases:
        config: dict[str, Any] = cls.model_config  # type: ignore[assignment]  # a TypedDict, written by key
        config["defer_build"] = True
        if config.get("alias_generator") is json_name:
            config["alias_generator"] = _memoized_to_camel
    try:
        yield
    finally:
        for cls, values in zip(bases, saved, strict=True):
            config = cls.model_config  # type: ignore[assignment]
            for name, value in values.items():
                if value is _UNSET:
                    config.pop(name, None)
                else:
                    config[name] = value


# pydantic calls a model's alias generator once per field of every class, and the same field names come back in
# kind after kind (name, replicas, conditions...): pyop's camelCase aliases computed once per name while a project
# is imported (to_camel is a pure function of the name, so the aliases are the same).
_memoized_to_camel = functools.lru_cache(maxsize=4096)(json_name)


def _pyop_subclasses(cls: type[BaseModel]) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for sub in cls.__subclasses__():
        if sub.__module__.startswith("pyop."):
            found.append(sub)
            found.extend(_pyop_subclasses(sub))
    return found


_UNSET = object()


def _belongs(module_name: str, package: str) -> bool:
    return module_name == package or module_name.startswith(package + ".")


def api_module_names(root: Path, package: str) -> list[tuple[str, Path]]:
    """Every module under `<package>/api`, in a stable order."""
    api_dir = root / package / "api"
    if not api_dir.is_dir():
        raise ManifestError([f"{api_dir.relative_to(root)}: no API package; run `pyop create api` first"])
    modules = []
    for path in sorted(api_dir.rglob("*.py")):
        relative = path.relative_to(root).with_suffix("")
        parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
        modules.append((".".join(parts), path))
    return modules


def load_kinds(root: Path, package: str) -> list[KindVersion]:
    """Import the API modules and return the root kinds they define (classes of `pyop.api.Resource` with a group)."""
    from pyop.api import Resource

    problems: list[str] = []
    causes: list[BaseException] = []
    failed: set[tuple[SourceLocation, str]] = set()
    kinds: list[KindVersion] = []
    for module_name, path in api_module_names(root, package):
        try:
            module = importlib.import_module(module_name)
        except (Exception, SystemExit) as exc:  # the user's code may raise anything while importing, exit too
            where = location_in(exc, root) or SourceLocation(path.relative_to(root).as_posix(), 1)
            if (where, describe_exception(exc)) not in failed:  # a module importing a failed one fails there too
                failed.add((where, describe_exception(exc)))
                problems.append(f"{where}: cannot import {module_name}: {describe_exception(exc)}{_hint(exc)}")
                causes.append(exc)
            continue
        for value in vars(module).values():
            if not (isinstance(value, type) and value.__module__ == module_name):
                continue
            if not issubclass(value, Resource):
                _check_not_a_root(value, problems)
                continue
            docs = class_docs(value)
            root_marker = docs.first("kubebuilder:object:root")
            if root_marker is not None and root_marker.value is False:
                continue
            if "resource_info" not in value.__dict__ and root_marker is None:
                continue  # a base class of kinds, not a kind
            markers = package_markers(value)
            if any(m.name == "kubebuilder:skip" for m in markers):
                continue
            try:
                info = resource_info(value, markers, docs)
            except MarkerError as exc:
                problems.append(str(exc))
                continue
            kinds.append(KindVersion(value, docs, str(path.relative_to(root)), info))
    if problems:
        raise ManifestError(problems, causes)
    return kinds


def _hint(exc: BaseException) -> str:
    """The pointer to the traceback, for exceptions that are not plain mistakes in the source the line shows
    (a syntax error, an undefined name, a missing module). A failed import is reported as
    `file:line: cannot import <module>: <Type>: <message>` at the project line that raised or led to it."""
    return "" if isinstance(exc, (SyntaxError, NameError, ImportError)) else f" {DEBUG_HINT}"


@contextlib.contextmanager
def user_code_errors(root: Path) -> Iterator[None]:
    """Any exception while the project's modules are imported and walked becomes one `file:line: ...` problem.

    The walker turns what it knows (markers, types without a schema, undefined names) into located errors
    itself; this is the net for the rest: a validator or default factory that raises, a class pydantic refuses,
    a source file that cannot be read. The line is the innermost one of the project's files in the traceback.
    """
    try:
        yield
    except PyopError:
        raise
    except (Exception, SystemExit) as exc:
        where = location_in(exc, root)
        prefix = f"{where}: " if where is not None else ""
        raise ManifestError([f"{prefix}{describe_exception(exc)}{_hint(exc)}"], [exc]) from exc


def _check_not_a_root(cls: type, problems: list[str]) -> None:
    """`+kubebuilder:object:root` on a class that is neither a Resource nor a ResourceList would be ignored."""
    from pyop.api import ResourceList

    if issubclass(cls, ResourceList):
        return
    marker = class_docs(cls).first("kubebuilder:object:root")
    if marker is not None and marker.value:
        problems.append(
            f"{marker.location}: class {cls.__name__} is marked +kubebuilder:object:root=true but is not a "
            "pyop.api.Resource; derive it from Resource (with group_version=...) to make it a kind"
        )


def resource_info(cls: type, markers: list[ParsedMarker], docs: DocBlock) -> ResourceInfo:
    """Group and version of a kind: its `group_version=` keyword, or the package's `+groupName`/`+versionName`.

    Both may be written (the scaffold writes both); then they must agree, since the runtime addresses objects
    with the class keyword and the CRD is built from the markers.
    """
    from pyop.api import ResourceInfo
    from pyop.api.naming import default_plural

    group = next((m for m in markers if m.name == "groupName"), None)
    version = next((m for m in markers if m.name == "versionName"), None)
    declared = cls.__dict__.get("resource_info")
    if declared is not None:
        for marker, value, keyword in ((group, declared.group, "group"), (version, declared.version, "version")):
            if marker is not None and marker.value != value:
                raise MarkerError(
                    f"+{marker.name}={marker.value} disagrees with {keyword}={value!r} of class {cls.__name__}'s "
                    "GroupVersion; keep them the same",
                    marker.location,
                )
        return declared  # type: ignore[no-any-return]
    if group is None:
        raise MarkerError(
            f"class {cls.__name__} is marked +kubebuilder:object:root=true but has no group: pass "
            "group_version=GroupVersion(...) to the class or write +groupName=<group> in the package docstring"
        )
    version_name = version.value if version is not None else cls.__module__.split(".")[-2]
    resource = docs.first("kubebuilder:resource")
    args = resource.value if resource is not None else {}
    return ResourceInfo(
        group=group.value,
        version=version_name,
        kind=cls.__name__,
        plural=args.get("path") or default_plural(cls.__name__),
        namespaced=args.get("scope") != "Cluster",
    )
