"""Finding markers and docs in Python source: the comment block right above a class or field, and docstrings.

As controller-gen reads Go doc comments, pyop reads the contiguous `#` lines directly above a `class` statement
(above its decorators) or a field (a `#` line inside a multi-line string is never mistaken for a comment).
Lines starting with `+` are markers; the other lines form the description. Docstring lines starting with `+` are
markers too, so a class may carry its markers in its docstring.
"""

from __future__ import annotations

import ast
import inspect
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pyop_scaffold.manifests.errors import MarkerError, SourceLocation
from pyop_scaffold.manifests.markers.parser import ParsedMarker, parse_marker
from pyop_scaffold.manifests.markers.registry import Target


@dataclass(frozen=True)
class DocBlock:
    """The markers and description attached to one class, field or module."""

    markers: tuple[ParsedMarker, ...] = ()
    description: str = ""
    line: int = 0

    def named(self, name: str) -> list[ParsedMarker]:
        return [m for m in self.markers if m.name == name]

    def first(self, name: str) -> ParsedMarker | None:
        found = self.named(name)
        return found[0] if found else None

    def has(self, name: str) -> bool:
        return any(m.name == name for m in self.markers)


EMPTY = DocBlock()

_Comments = dict[int, tuple[str, ParsedMarker | None]]  # comment lines: {line: (text, its marker or None)}


@dataclass
class ModuleDocs:
    """Doc blocks of one source file, keyed by class qualname and by (class qualname, field name)."""

    path: str
    module: DocBlock = EMPTY
    classes: dict[str, DocBlock] = field(default_factory=dict)
    fields: dict[tuple[str, str], DocBlock] = field(default_factory=dict)
    aliases: dict[str, DocBlock] = field(default_factory=dict)  # module-level `Name = Annotated[...]` with docs
    all_markers: tuple[ParsedMarker, ...] = ()  # every marker comment in the file (RBAC markers live anywhere)

    def for_class(self, qualname: str) -> DocBlock:
        return self.classes.get(qualname, EMPTY)

    def for_field(self, qualname: str, name: str) -> DocBlock:
        return self.fields.get((qualname, name), EMPTY)


# Error messages name files relative to the project being generated, whatever the working directory.
DISPLAY_ROOT: ContextVar[Path | None] = ContextVar("DISPLAY_ROOT", default=None)


def display_path(path: Path) -> str:
    root = DISPLAY_ROOT.get()
    if root is not None:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    return str(path)


def read_module_docs(path: Path) -> ModuleDocs:
    info = path.stat()
    return _read_cached(str(path), info.st_mtime_ns, info.st_size, display_path(path))


@lru_cache(maxsize=1024)
def _read_cached(path: str, _mtime_ns: int, _size: int, display: str) -> ModuleDocs:
    from pyop_scaffold.manifests.markers import docs_cache  # it builds on this module's types

    source = Path(path).read_text(encoding="utf-8")
    docs = docs_cache.load(path, source, display)
    if docs is None:
        docs = read_source_docs(source, path, display)
        docs_cache.store(path, source, display, docs)
    return docs


def read_source_docs(source: str, path: str, display: str) -> ModuleDocs:
    """The docs of one module's source text (`display` names it in the markers' locations)."""
    tree = ast.parse(source, filename=path)
    # Each comment line is parsed once: {line: (text, its marker or None)}.
    comments = {
        line: (text, _marker(text, display, line)) for line, text in sorted(_comment_lines(source, tree).items())
    }
    docs = ModuleDocs(display)
    docs.module = _docstring_block(tree.body, display)
    check_placement(docs.module, Target.PACKAGE, "the module docstring")
    docs.all_markers = tuple(marker for _, marker in comments.values() if marker is not None)
    _walk(tree.body, "", comments, display, docs)
    _module_assignments(tree.body, comments, display, docs)
    return docs


def _module_assignments(body: list[ast.stmt], comments: _Comments, path: str, docs: ModuleDocs) -> None:
    """Docs of module-level assignments: a type alias (`Callsign = Annotated[str, ...]`) may carry type markers,
    as a named Go type does (`type Callsign string` with markers above it)."""
    for index, statement in enumerate(body):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target = statement.target
        else:
            continue
        if not isinstance(target, ast.Name):
            continue
        block = _block_above(statement.lineno, comments, path)
        docstring = _attribute_docstring(body[index + 1 : index + 2])
        if docstring and not block.description:
            block = DocBlock(block.markers, docstring, block.line)
        if block.markers or block.description:
            check_placement(block, Target.TYPE, f"alias {target.id}")
            docs.aliases[target.id] = block


def _comment_lines(source: str, tree: ast.Module) -> dict[int, str]:
    """{line number: comment text} for lines holding nothing but a comment.

    A line is a comment line if it starts with `#` and is not inside a multi-line string, which the syntax tree
    tells (Python's tokenizer would too, at three times the cost of the whole rest of reading a module).
    """
    lines = source.splitlines()
    candidates = {number: text for number, text in enumerate(lines, start=1) if text.lstrip().startswith("#")}
    if not candidates:
        return {}
    inside_strings: set[int] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        if start is not None and end is not None and end <= start:
            continue  # a one-line node holds no multi-line string
        if isinstance(node, (ast.Constant, ast.JoinedStr)):
            inside_strings.update(range(start + 1, end + 1))  # type: ignore[operator]
            continue
        stack.extend(ast.iter_child_nodes(node))
    return {number: text.lstrip()[1:] for number, text in candidates.items() if number not in inside_strings}


def _walk(body: list[ast.stmt], prefix: str, comments: _Comments, path: str, docs: ModuleDocs) -> None:
    for node in body:
        if not isinstance(node, ast.ClassDef):
            continue
        qualname = f"{prefix}{node.name}"
        first_line = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        above = _block_above(first_line, comments, path)
        inside = _docstring_block(node.body, path)
        docs.classes[qualname] = DocBlock(
            markers=above.markers + inside.markers,
            description=inside.description or above.description,
            line=node.lineno,
        )
        check_placement(docs.classes[qualname], Target.TYPE, f"class {qualname}")
        for index, statement in enumerate(node.body):
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                block = _block_above(statement.lineno, comments, path)
                docstring = _attribute_docstring(node.body[index + 1 : index + 2])
                if docstring and not block.description:
                    block = DocBlock(block.markers, docstring, block.line)
                docs.fields[(qualname, statement.target.id)] = block
                check_placement(block, Target.FIELD, f"field {qualname}.{statement.target.id}")
        _walk(node.body, qualname + ".", comments, path, docs)


def check_placement(block: DocBlock, target: Target, where: str) -> None:
    """A marker written where it has no meaning is an error naming both (controller-gen would ignore it).

    FILE markers (RBAC, webhooks) may be anywhere. A marker that may appear once, written twice with different
    values, is an error too: which one wins would be a guess.
    """
    seen: dict[str, ParsedMarker] = {}
    allowed = target.value | Target.FILE.value  # plain ints: combining Flag members builds new members each time
    for marker in block.markers:
        targets = marker.definition.targets
        if not targets.value & allowed:
            raise MarkerError(
                f"+{marker.written_name} is a {targets.describe()} marker and cannot be used on {where}",
                marker.location,
            )
        if marker.definition.repeatable or marker.items:
            continue
        earlier = seen.setdefault(marker.name, marker)
        if earlier is not marker and earlier.value != marker.value:
            raise MarkerError(
                f"+{marker.name} is written twice on {where} with different values (first at line "
                f"{earlier.location.line}); keep one",
                marker.location,
            )


def _attribute_docstring(following: list[ast.stmt]) -> str:
    """A string literal right after a field documents it (PEP 257's attribute docstring)."""
    if following and isinstance(following[0], ast.Expr) and isinstance(following[0].value, ast.Constant):
        value = following[0].value.value
        if isinstance(value, str):
            return inspect.cleandoc(value)
    return ""


def _block_above(line: int, comments: _Comments, path: str) -> DocBlock:
    """The contiguous comment lines right above `line`: markers, and the other lines as the description."""
    first = line
    while first - 1 in comments:
        first -= 1
    markers = []
    description = []
    for number in range(first, line):
        text, marker = comments[number]
        if marker is not None:
            markers.append(marker)
        elif not _is_marker_text(text):
            description.append(_strip_one_space(text))
    return DocBlock(tuple(markers), _join(description), line)


def _docstring_block(body: list[ast.stmt], path: str) -> DocBlock:
    """Markers and description of the docstring opening `body`; markers keep the line they are written on."""
    first = body[0] if body else None
    if not (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    ):
        return EMPTY
    raw = first.value.value
    markers = []
    for offset, text in enumerate(raw.splitlines()):
        marker = _marker(text, path, first.lineno + offset)
        if marker is not None:
            markers.append(marker)
    description = [text for text in inspect.cleandoc(raw).splitlines() if not _is_marker_text(text)]
    return DocBlock(tuple(markers), _join(description), first.lineno)


def _is_marker_text(text: str) -> bool:
    stripped = text.strip()
    return len(stripped) > 1 and stripped[0] == "+" and (stripped[1].isalpha())


def _marker(text: str, path: str, line: int) -> ParsedMarker | None:
    if not _is_marker_text(text):
        return None
    return parse_marker(text.strip()[1:], SourceLocation(path, line))


def _strip_one_space(text: str) -> str:
    return text[1:] if text.startswith(" ") else text


def _join(lines: list[str]) -> str:
    if not lines:
        return ""
    text = "\n".join(line.rstrip() for line in lines).strip("\n")
    return text.strip()
