"""Finding markers and docs in Python source: the comment block right above a class or field, and docstrings.

As controller-gen reads Go doc comments, pyop reads the contiguous `#` lines directly above a `class` statement
(above its decorators) or a field (a `#` line inside a multi-line string is never mistaken for a comment).
Lines starting with `+` are markers; the other lines form the description. Docstring lines starting with `+` are
markers too, so a class may carry its markers in its docstring.

Lines are numbered as Python numbers them: only `\n`, `\r\n` and `\r` end a line. `str.splitlines` also splits at a
form feed, NEL, U+2028 and others, which Python's tokenizer reads as part of a line; one of those in a comment or a
string would shift every later line and put markers on the wrong field.
"""

from __future__ import annotations

import ast
import inspect
import io
import re
import sys
import tokenize
import warnings
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


@dataclass(frozen=True)
class _Comments:
    """The comment lines of a module ({line: (text, its marker or None)}) and its blank lines."""

    lines: dict[int, tuple[str, ParsedMarker | None]]
    blank: frozenset[int]
    source: list[str]  # every line of the module (python_lines)

    def indent(self, line: int) -> str:
        text = self.source[line - 1] if 0 < line <= len(self.source) else ""
        return text[: len(text) - len(text.lstrip(_SPACE))]


@dataclass
class ModuleDocs:
    """Doc blocks of one source file, keyed by class qualname and by (class qualname, field name)."""

    path: str
    module: DocBlock = EMPTY
    classes: dict[str, DocBlock] = field(default_factory=dict)
    fields: dict[tuple[str, str], DocBlock] = field(default_factory=dict)
    aliases: dict[str, DocBlock] = field(default_factory=dict)  # module-level `Name = Annotated[...]` with docs
    # A documented alias of another name (`Percent = Int32`): {alias: the name as written}. Both names are one
    # object at run time, so only the source tells which one a field was written with.
    renames: dict[str, str] = field(default_factory=dict)
    # The annotation of each field as written ({(class qualname, field): source}): aliases are found by name in it.
    annotations: dict[tuple[str, str], str] = field(default_factory=dict)
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
    lines = python_lines(source)
    # Each comment line is parsed once: {line: (text, its marker or None)}.
    comments = _Comments(
        {line: (text, _marker(text, display, line)) for line, text in sorted(_comment_lines(lines, tree).items())},
        frozenset(number for number, text in enumerate(lines, start=1) if not text.strip(_SPACE)),
        lines,
    )
    docs = ModuleDocs(display)
    docs.module = _docstring_block(tree.body, display, lines)
    check_placement(docs.module, Target.PACKAGE, "the module docstring")
    docs.all_markers = tuple(marker for _, marker in comments.lines.values() if marker is not None)
    _walk(tree.body, "", comments, display, docs, lines)
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
            value = statement.value
            if isinstance(value, (ast.Name, ast.Attribute)):
                docs.renames[target.id] = ast.unparse(value)


_LINE_END = re.compile(r"\r\n|\r|\n")
_SPACE = " \t\f"  # what Python's tokenizer skips before a comment


def python_lines(source: str) -> list[str]:
    """The lines of `source` as Python's tokenizer (and the syntax tree's line numbers) count them."""
    return _LINE_END.split(source) if "\r" in source else source.split("\n")


def _comment_lines(lines: list[str], tree: ast.Module) -> dict[int, str]:
    """{line number: comment text} for lines holding nothing but a comment.

    A line is a comment line if it starts with `#` and is not inside a multi-line string, which the syntax tree
    tells (Python's tokenizer would too, at three times the cost of the whole rest of reading a module; a test
    checks both agree).
    """
    candidates = {number: text for number, text in enumerate(lines, start=1) if text.lstrip(_SPACE).startswith("#")}
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
    return {number: text.lstrip(_SPACE)[1:] for number, text in candidates.items() if number not in inside_strings}


def _walk(
    body: list[ast.stmt], prefix: str, comments: _Comments, path: str, docs: ModuleDocs, lines: list[str]
) -> None:
    for node in body:
        if not isinstance(node, ast.ClassDef):
            continue
        qualname = f"{prefix}{node.name}"
        first_line = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        above = _block_above(first_line, comments, path)
        inside = _docstring_block(node.body, path, lines)
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
                docs.annotations[(qualname, statement.target.id)] = ast.unparse(statement.annotation)
                check_placement(block, Target.FIELD, f"field {qualname}.{statement.target.id}")
        _walk(node.body, qualname + ".", comments, path, docs, lines)


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
            return "\n".join(_cleandoc(value.split("\n"))) if _BREAKS.search(value) else inspect.cleandoc(value)
    return ""


def _block_above(line: int, comments: _Comments, path: str) -> DocBlock:
    """The contiguous comment lines right above `line`: markers, and the other lines as the description; plus
    the markers of the comment group before that one, across one blank line (indented as the statement).

    controller-gen reads markers from both groups, so Kubebuilder's own layout (`// +kubebuilder:object:root=true`,
    a blank line, `// CronJob is ...`, `type CronJob struct`) keeps its root markers; the description is the
    closest group's only.
    """
    first = _group_start(line, comments)
    earlier: list[ParsedMarker] = []
    if first - 1 in comments.blank and first - 2 in comments.lines:
        start = _group_start(first - 1, comments)
        # Indented as the statement: a comment left at the end of the class above is not this one's.
        if all(comments.indent(n) == comments.indent(line) for n in range(start, first - 1)):
            earlier = [m for n in range(start, first - 1) if (m := comments.lines[n][1])]
    markers = []
    description = []
    for number in range(first, line):
        text, marker = comments.lines[number]
        if marker is not None:
            markers.append(marker)
        elif not _is_marker_text(text):
            description.append(_strip_one_space(text))
    return DocBlock(tuple(earlier + markers), _join(description), line)


def _group_start(line: int, comments: _Comments) -> int:
    """The first line of the contiguous comment lines that end right above `line` (`line` if there are none)."""
    first = line
    while first - 1 in comments.lines:
        first -= 1
    return first


def _docstring_block(body: list[ast.stmt], path: str, lines: list[str]) -> DocBlock:
    """Markers and description of the docstring opening `body`; markers keep the line they are written on."""
    first = body[0] if body else None
    if not (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    ):
        return EMPTY
    numbered = docstring_lines(first.value, lines)
    markers = []
    for number, text in numbered:
        marker = _marker(text, path, number)
        if marker is not None:
            markers.append(marker)
    value = first.value.value
    cleaned = (
        _cleandoc([text for _, text in numbered]) if _BREAKS.search(value) else inspect.cleandoc(value).split("\n")
    )
    description = [text for text in cleaned if not _is_marker_text(text)]
    return DocBlock(tuple(markers), _join(description), first.lineno)


def docstring_lines(node: ast.Constant, lines: list[str]) -> list[tuple[int, str]]:
    """The lines of a string literal's value, each with the source line it is written on.

    The value's lines are split at `\n` only. They match the source lines one for one unless an escape (`\n`, a
    backslash at the end of a line) or implicit concatenation adds or removes a line break; then each written
    line is decoded on its own (escapes never span lines), which is slower but rare.
    """
    value = node.value
    assert isinstance(value, str)
    start, end = node.lineno, node.end_lineno or node.lineno
    written = lines[start - 1 : end]
    if value.count("\n") == end - start and not any("\\" in line for line in written):
        return [(start + offset, text) for offset, text in enumerate(value.split("\n"))]
    decoded = _decode_by_line(node, written)
    if decoded is None:  # cannot happen for source Python compiled; keep the value's own lines
        return [(start + offset, text) for offset, text in enumerate(value.split("\n"))]
    return decoded


_STRING_PREFIX = re.compile(r"([a-zA-Z]*)('\'\'|\"\"\"|'|\")")


def _decode_by_line(node: ast.Constant, written: list[str]) -> list[tuple[int, str]] | None:
    """`docstring_lines` the slow way: tokenize the literal, decode each written line of each string token."""
    first = written[0].encode("utf-8")[node.col_offset :].decode("utf-8", "replace")
    if len(written) == 1:
        segment = written[0].encode("utf-8")[node.col_offset : node.end_col_offset].decode("utf-8", "replace")
    else:
        last = written[-1].encode("utf-8")[: node.end_col_offset].decode("utf-8", "replace")
        segment = "\n".join([first, *written[1:-1], last])
    try:
        tokens = [
            t for t in tokenize.generate_tokens(io.StringIO(f"({segment})").readline) if t.type == tokenize.STRING
        ]
    except (tokenize.TokenError, SyntaxError):
        return None
    result: list[tuple[int, str]] = []
    joined = False  # the next text continues the last value line (a backslash continuation, or concatenation)
    for token in tokens:
        match = _STRING_PREFIX.match(token.string)
        if match is None:
            return None
        prefix, quote = match.groups()
        body = token.string[match.end() : len(token.string) - len(quote)]
        raw = "r" in prefix.lower()
        joined = bool(result)
        for offset, piece in enumerate(python_lines(body)):
            number = node.lineno + token.start[0] - 1 + offset
            continued = False
            if not raw:
                backslashes = len(piece) - len(piece.rstrip("\\"))
                continued = backslashes % 2 == 1
                text = _unescape(piece[:-1] if continued else piece)
                if text is None:
                    return None
            else:
                text = piece
            for index, part in enumerate(text.split("\n")):
                if joined and index == 0 and result:
                    result[-1] = (result[-1][0], result[-1][1] + part)
                else:
                    result.append((number, part))
            joined = continued
    return result


def _unescape(piece: str) -> str | None:
    """The value of one written line of a non-raw string literal (escapes decoded as Python decodes them)."""
    for quote in ("'''", '"""'):
        if quote not in piece and not piece.endswith(quote[0]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # an invalid escape (`\d`) stays as written, as in the module
                try:
                    value = ast.literal_eval(quote + piece + quote)
                except (SyntaxError, ValueError, MemoryError, RecursionError):
                    return None
            return value if isinstance(value, str) else None
    return None


# Where str.splitlines (and so inspect.cleandoc) breaks a line but Python does not.
_BREAKS = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def _cleandoc(lines: list[str]) -> list[str]:
    """`inspect.cleandoc` on lines already split (it splits with `str.splitlines`, which breaks at a form feed)."""
    lines = [line.expandtabs() for line in lines]
    margin = sys.maxsize
    for line in lines[1:]:
        content = len(line.lstrip())
        if content:
            margin = min(margin, len(line) - content)
    if lines:
        lines[0] = lines[0].lstrip()
    if margin < sys.maxsize:
        lines[1:] = [line[margin:] for line in lines[1:]]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


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
