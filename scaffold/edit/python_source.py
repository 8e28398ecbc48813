"""Edits of the user's Python modules (a kind's types file): add an import, a base class, methods, a marker.

Kubebuilder edits Go files by searching for code fragments; pyop reads positions from Python's own parser
(`ast`), so the edits work however the user formatted the class. Every edit is skipped when what it adds is
already there, so re-running a command changes nothing.
"""

from __future__ import annotations

import ast
import sys

from pyop_scaffold.errors import ProjectError


def _parse(text: str, source: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        raise ProjectError(f"cannot edit {source}: not valid Python (line {exc.lineno}: {exc.msg})") from exc


def _class(tree: ast.Module, name: str, source: str) -> ast.ClassDef:
    node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
    if node is None:
        raise ProjectError(f"cannot edit {source}: it has no top-level class {name}")
    return node


def class_defines(text: str, class_name: str, member: str, *, source: str) -> bool:
    """Whether the class body defines `member` (a method or an attribute)."""
    node = _class(_parse(text, source), class_name, source)
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == member:
            return True
        targets = (
            item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(item, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == member for t in targets):
            return True
    return False


def add_import(text: str, statement: str, *, source: str, first_party: str = "") -> str:
    """Add the one-line import `statement` to the module's imports, unless it is there.

    It joins its group as isort (ruff's `I` rules) orders them: `__future__`, standard library, third party,
    first party (the package `first_party`), relative; a new group gets blank lines around it.
    """
    lines = text.splitlines(keepends=True)
    if any(line.strip() == statement for line in lines):
        return text
    tree = _parse(text, source)
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    new = ast.parse(statement).body[0]
    group = _import_group(new, first_party)
    same = [n for n in imports if _import_group(n, first_party) == group]
    if same:
        following = [n for n in same if _sort_key(n) > _sort_key(new)]
        if following:
            return _insert(lines, following[0].lineno - 1, [statement])
        return _insert(lines, _end(same[-1]), [statement])
    later = [n for n in imports if _import_group(n, first_party) > group]
    if later:
        return _insert(lines, later[0].lineno - 1, [statement, ""])
    if imports:
        return _insert(lines, _end(imports[-1]), ["", statement])
    first = tree.body[0] if tree.body else None
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    at = _end(first) if first is not None and docstring else 0
    return _insert(lines, at, ["", statement] if at else [statement, ""])


def _import_group(node: ast.stmt, first_party: str) -> int:
    if isinstance(node, ast.ImportFrom) and node.level > 0:
        return 4
    module = _top_module(node)
    if module == "__future__":
        return 0
    if module in sys.stdlib_module_names:
        return 1
    return 3 if first_party and module == first_party else 2


def _sort_key(node: ast.stmt) -> tuple[int, str, str]:
    """isort's order within a group (ruff's defaults): `import x` lines first, then `from x import y`, each by
    module, then by the first name imported, case-insensitively."""
    if isinstance(node, ast.Import):
        return (0, node.names[0].name.lower(), "")
    if isinstance(node, ast.ImportFrom):
        return (1, ("." * node.level + (node.module or "")).lower(), node.names[0].name.lower())
    return (2, "", "")


def _top_module(node: ast.stmt) -> str:
    if isinstance(node, ast.Import):
        return node.names[0].name.partition(".")[0]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return node.module.partition(".")[0]
    return ""


def _end(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


def _insert(lines: list[str], at: int, new: list[str]) -> str:
    return "".join([*lines[:at], *(f"{line}\n" if line else "\n" for line in new), *lines[at:]])


def add_class_base(text: str, class_name: str, base: str, *, source: str) -> str:
    """Add `base` after the class's last positional base, on a line of its own when the bases are one a line."""
    node = _class(_parse(text, source), class_name, source)
    if any(isinstance(b, ast.Name) and b.id == base for b in node.bases):
        return text
    if not node.bases:
        raise ProjectError(f"cannot edit {source}: class {class_name} has no base classes to add {base} to")
    last = node.bases[-1]
    lines = text.splitlines(keepends=True)
    row = (last.end_lineno or last.lineno) - 1
    line = lines[row]
    end = last.end_col_offset or 0
    rest = line[end:]
    if line[: last.col_offset].strip() == "" and rest.strip() == ",":
        indent = line[: last.col_offset]
        lines.insert(row + 1, f"{indent}{base},\n")
    else:
        lines[row] = f"{line[:end]}, {base}{rest}"
    return "".join(lines)


def append_to_class(text: str, class_name: str, snippet: str, *, source: str) -> str:
    """Add `snippet` (indented class-body lines) at the end of the class body."""
    node = _class(_parse(text, source), class_name, source)
    lines = text.splitlines(keepends=True)
    end = node.end_lineno or node.lineno
    if end > 0 and not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    return "".join([*lines[:end], snippet if snippet.endswith("\n") else snippet + "\n", *lines[end:]])


def add_comment_above_class(text: str, class_name: str, comment: str, *, source: str) -> str:
    """Add a `# ...` line right above the class (below its other marker comments), unless that block has it."""
    node = _class(_parse(text, source), class_name, source)
    lines = text.splitlines(keepends=True)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
    above = first - 1
    while above >= 0 and lines[above].lstrip().startswith("#"):
        if lines[above].strip() == comment:
            return text
        above -= 1
    return "".join([*lines[:first], f"{comment}\n", *lines[first:]])


def ensure_marker_in_call(text: str, callee: str, comment: str, *, source: str) -> str:
    """Add a `# ...` line after the last keyword argument of the first call to `callee`, unless it is there.

    Puts an insertion point inside `ManagerOptions(...)` of a main.py scaffolded before it had one.
    """
    lines = text.splitlines(keepends=True)
    if any(line.strip() == comment for line in lines):
        return text
    call = next(
        (
            n
            for n in ast.walk(_parse(text, source))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == callee and n.keywords
        ),
        None,
    )
    if call is None:
        raise ProjectError(f"cannot add to {source}: no call {callee}(...) with keyword arguments; add '{comment}'")
    last = call.keywords[-1]
    row = last.end_lineno or last.lineno
    indent = lines[last.lineno - 1][: last.col_offset]
    if indent.strip():  # arguments on the call's line: nowhere to put a comment line
        raise ProjectError(
            f"cannot add to {source}: put the arguments of {callee}(...) one a line, then add '{comment}'"
        )
    return "".join([*lines[:row], f"{indent}{comment}\n", *lines[row:]])
