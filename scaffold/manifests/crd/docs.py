"""Where the markers and descriptions of a model class, field or package are: the docs of its imported module.

Looked up for every class and field while building schemas, so each module's docs are found once per import.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pyop_scaffold.manifests.errors import MarkerError, SourceLocation
from pyop_scaffold.manifests.markers.comments import EMPTY, DocBlock, ModuleDocs, display_path, read_module_docs
from pyop_scaffold.manifests.markers.parser import ParsedMarker


def module_docs(name: str) -> ModuleDocs | None:
    """The docs of an imported module (None for a module without Python source)."""
    module = sys.modules.get(name)
    if module is None:
        return None
    cached = _DOCS_BY_MODULE.get(name)
    if cached is not None and cached[0] is module:
        return cached[1]
    path = getattr(module, "__file__", None)
    docs = read_docs(Path(path)) if path and path.endswith(".py") else None
    _DOCS_BY_MODULE[name] = (module, docs)
    return docs


def read_docs(path: Path) -> ModuleDocs:
    """The docs of a project source file; one that is not UTF-8 or not Python is a located one-line error.

    Python imports a module with undecodable bytes in a comment, and the generator reads every module of the
    package, imported or not (controllers hold RBAC markers): either way the file and line are named.
    """
    try:
        return read_module_docs(path)
    except UnicodeDecodeError as exc:
        shown = display_path(path)
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        byte = exc.object[exc.start : exc.start + 1].hex()
        raise MarkerError(
            f"not UTF-8 text (byte 0x{byte} cannot be decoded); save the file as UTF-8",
            SourceLocation(shown, line),
        ) from exc
    except SyntaxError as exc:
        shown = display_path(Path(exc.filename)) if exc.filename else display_path(path)
        raise MarkerError(f"not valid Python: {exc.msg}", SourceLocation(shown, exc.lineno or 1)) from exc


# Module name -> (the module object, its docs). Looked up for every class and field, so it must be cheaper than
# the stat() that read_module_docs does to notice edits; a re-imported module is a new object and misses.
_DOCS_BY_MODULE: dict[str, tuple[object, ModuleDocs | None]] = {}


def class_docs(cls: type) -> DocBlock:
    docs = module_docs(cls.__module__)
    return docs.for_class(cls.__qualname__) if docs else EMPTY


def field_docs_of(cls: type, name: str) -> DocBlock:
    """The comment block above a field, looked up in the class that declares the field."""
    for klass in cls.__mro__:
        if name in getattr(klass, "__annotations__", {}):
            docs = module_docs(klass.__module__)
            return docs.for_field(klass.__qualname__, name) if docs else EMPTY
    return EMPTY


def field_annotation_of(cls: type, name: str) -> tuple[str, str] | None:
    """(module of the class declaring the field, the field's annotation as written there), if its source is known."""
    for klass in cls.__mro__:
        if name in getattr(klass, "__annotations__", {}):
            docs = module_docs(klass.__module__)
            written = docs.annotations.get((klass.__qualname__, name)) if docs else None
            return (klass.__module__, written) if written is not None else None
    return None


def package_markers(cls: type) -> list[ParsedMarker]:
    """Package-level markers of a class: in its package's `__init__` and `groupversion_info` docstrings and in
    the docstring of its own module (Go allows them in any file's package comment)."""
    package = cls.__module__.rpartition(".")[0]
    found: list[ParsedMarker] = []
    for name in dict.fromkeys((package, f"{package}.groupversion_info", cls.__module__)):
        docs = module_docs(name)
        if docs is not None:
            found.extend(docs.module.markers)
    return found


def package_default_required(cls: type) -> bool:
    """Fields without a default are required, unless the package says `+kubebuilder:validation:Optional`."""
    names = {m.name for m in package_markers(cls)}
    if "kubebuilder:validation:Optional" in names and "kubebuilder:validation:Required" in names:
        marker = next(m for m in package_markers(cls) if m.name == "kubebuilder:validation:Required")
        raise MarkerError("the package is marked both +kubebuilder:validation:Optional and Required", marker.location)
    return "kubebuilder:validation:Optional" not in names


def docs_path(cls: type) -> str:
    docs = module_docs(cls.__module__)
    return docs.path if docs else cls.__module__


def source_of(cls: type) -> tuple[str, int]:
    docs = module_docs(cls.__module__)
    block = docs.for_class(cls.__qualname__) if docs else EMPTY
    return (docs.path if docs else cls.__module__), block.line


def issubclass_safe(cls: type, base_name: str) -> bool:
    return any(klass.__name__ == base_name and klass.__module__.startswith("pyop.") for klass in cls.__mro__)
