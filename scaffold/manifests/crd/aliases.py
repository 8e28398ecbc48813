"""Documented type aliases, found by the name a field's annotation is written with.

A Go named type (`type ConcurrencyPolicy string`) carries its markers to every field of that type. The Python
spellings are module-level assignments with a comment or docstring: `ConcurrencyPolicy = str`,
`Callsign = Annotated[str, Field(min_length=3)]`, `Percent = Int32`. At run time a field annotated
`ConcurrencyPolicy` holds plain `str`, and `Percent` *is* the `Int32` object, so looking aliases up by identity
either finds nothing or finds the wrong name. The source says which name a field was written with: fields whose
annotation is the alias itself, an `Optional`/`| None` of it or a list of it are resolved by that name. Identity
lookup stays for `Annotated` aliases nested deeper (`dict[str, Callsign]`), where the object is the alias's own.
An alias with markers written anywhere else is refused, never dropped.
"""

from __future__ import annotations

import ast
import functools
import sys
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pyop_scaffold.manifests.crd.docs import module_docs
from pyop_scaffold.manifests.markers.comments import DocBlock

__all__ = ["AliasIndex", "AliasUse", "NamedAlias", "alias_use"]

Position = Literal["self", "items"]
_LISTS = {"list", "List", "Sequence", "set", "Set", "frozenset", "FrozenSet"}


@dataclass(frozen=True)
class NamedAlias:
    """One documented alias: where it is defined, its value and docs, and the name it renames (`Percent = Int32`)."""

    module: str
    name: str
    value: Any
    docs: DocBlock
    renames: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return ("alias", self.module, self.name)

    @property
    def by_name_only(self) -> bool:
        """True when identity cannot find this alias: a plain value (`= str`) or a second name of one object."""
        return self.renames is not None or typing.get_origin(self.value) is not typing.Annotated


@dataclass(frozen=True)
class AliasUse:
    """A name in a field's written annotation, and where in the field's schema the alias's schema goes."""

    name: str
    position: Position


@functools.lru_cache(maxsize=4096)
def alias_use(written: str) -> tuple[AliasUse | None, frozenset[str]]:
    """Where `written` (a field annotation's source) uses a name as the field's type or its list's items, and
    every other name the annotation mentions (an alias among those is in a place pyop cannot apply it).
    Remembered by text: a project writes the same few annotations (`int`, `str | None`) on most fields."""
    try:
        node = ast.parse(written, mode="eval").body
    except SyntaxError:
        return None, frozenset()
    mentioned = {ast.unparse(n) for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))}
    use = _use(node)
    return use, frozenset(mentioned - ({use.name} if use else set()))


def _use(node: ast.expr) -> AliasUse | None:
    node = _strip(node)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return AliasUse(ast.unparse(node), "self")
    if isinstance(node, ast.Subscript) and _tail(node.value) in _LISTS and not isinstance(node.slice, ast.Tuple):
        item = node.slice
        if isinstance(item, (ast.Name, ast.Attribute)):
            return AliasUse(ast.unparse(item), "items")
    return None


def _strip(node: ast.expr) -> ast.expr:
    """`X | None`, `None | X`, `Optional[X]` and `Annotated[X, ...]` are X for the alias's purposes."""
    while True:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            if _is_none(node.right):
                node = node.left
                continue
            if _is_none(node.left):
                node = node.right
                continue
        if isinstance(node, ast.Subscript) and _tail(node.value) == "Optional":
            node = node.slice
            continue
        if isinstance(node, ast.Subscript) and _tail(node.value) == "Annotated" and isinstance(node.slice, ast.Tuple):
            node = node.slice.elts[0]
            continue
        return node


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _tail(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


class AliasIndex:
    """The documented aliases of the project packages seen so far, by identity and by (module, name)."""

    def __init__(self) -> None:
        self._by_id: dict[int, NamedAlias] = {}
        self._by_name: dict[str, list[NamedAlias]] = {}
        self._packages: set[str] = set()

    def index_package(self, top: str) -> None:
        """Learn the documented aliases of every imported module of package `top` (once per package)."""
        if top in self._packages:
            return
        self._packages.add(top)
        for module_name in sorted(name for name in sys.modules if name == top or name.startswith(top + ".")):
            docs = module_docs(module_name)
            if docs is None:
                continue
            module = sys.modules[module_name]
            for alias_name, block in docs.aliases.items():
                if not hasattr(module, alias_name):
                    continue
                alias = NamedAlias(
                    module_name, alias_name, getattr(module, alias_name), block, docs.renames.get(alias_name)
                )
                self._by_name.setdefault(alias_name, []).append(alias)
                if not alias.by_name_only:
                    self._by_id.setdefault(id(alias.value), alias)

    def by_identity(self, annotation: Any) -> NamedAlias | None:
        """The `Annotated` alias that is this very object (a rename of it is only found by name)."""
        if typing.get_origin(annotation) is not typing.Annotated:
            return None
        return self._by_id.get(id(annotation))

    def resolve(self, module_name: str, written: str) -> NamedAlias | None:
        """The documented alias that `written` (a name or dotted name in module `module_name`) refers to."""
        value = _lookup(module_name, written)
        if value is _MISSING:
            return None
        candidates = [a for a in self._by_name.get(written.rpartition(".")[2], []) if a.value is value]
        own = [a for a in candidates if a.module == module_name]
        found = own or candidates
        return found[0] if found else None


_MISSING = object()


def _lookup(module_name: str, written: str) -> Any:
    """The object a (dotted) name written in a module refers to, or _MISSING."""
    module = sys.modules.get(module_name)
    if module is None:
        return _MISSING
    head, *rest = written.split(".")
    value = getattr(module, head, _MISSING)
    if value is _MISSING:
        builtins = getattr(module, "__builtins__", {})
        value = builtins.get(head, _MISSING) if isinstance(builtins, dict) else getattr(builtins, head, _MISSING)
    for part in rest:
        value = getattr(value, part, _MISSING)
        if value is _MISSING:
            break
    return value
