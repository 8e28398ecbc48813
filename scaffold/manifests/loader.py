"""Importing a project's API modules, as controller-gen loads Go packages, and finding the kinds in them.

The project's package is imported from the project folder and removed from `sys.modules` afterwards, so several
projects with the same package name can be generated in one process (the test suite does) and a re-run sees edits.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from scaffold.manifests.crd.schema import class_docs, package_markers
from scaffold.manifests.errors import ManifestError
from scaffold.manifests.markers.comments import DISPLAY_ROOT, DocBlock


@dataclass(frozen=True)
class KindVersion:
    """One version of a kind: the root model class and the markers written above it."""

    cls: type
    docs: DocBlock
    source: str

    @property
    def info(self):  # type: ignore[no-untyped-def]
        return self.cls.resource_info  # type: ignore[attr-defined]


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
        yield
    finally:
        DISPLAY_ROOT.reset(token)
        with contextlib.suppress(ValueError):
            sys.path.remove(root_str)
        for name in [n for n in sys.modules if _belongs(n, package)]:
            del sys.modules[name]
        sys.modules.update(saved)


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
    kinds: list[KindVersion] = []
    for module_name, path in api_module_names(root, package):
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # the user's code may raise anything while importing
            problems.append(f"{path.relative_to(root)}: cannot import {module_name}: {_one_line(exc)}")
            continue
        for value in vars(module).values():
            if not (isinstance(value, type) and issubclass(value, Resource) and value.__module__ == module_name):
                continue
            if "resource_info" not in value.__dict__:
                continue
            docs = class_docs(value)
            root_marker = docs.first("kubebuilder:object:root")
            if root_marker is not None and root_marker.value is False:
                continue
            if any(m.name == "kubebuilder:skip" for m in package_markers(value)):
                continue
            kinds.append(KindVersion(value, docs, str(path.relative_to(root))))
    if problems:
        raise ManifestError(problems)
    return kinds


def _one_line(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"{type(exc).__name__}: {text}{where}"
