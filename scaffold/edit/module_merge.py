"""Adding to a scaffolded Python module what a fresh rendering of it has and the user's copy lacks.

`create webhook --conversion` on a kind that has admission webhooks (or the reverse) must not rewrite the user's
webhook module and its test: the user has filled them in. The command renders the module as it would write it now
and hands both texts here; what is added, each at its place, and nothing else touched:
- import statements (a name missing from an existing `from m import ...` joins it, in isort's order);
- top-level classes, functions and assignments, each with the comments and blank lines above it in the rendering,
  placed before the first definition that follows it in the rendering and exists in the user's module (else at
  the end);
- the lines of a builder chain (`.with_defaulter(...)`) in a named function, above its `.complete()` line.
Given the rendering the user's copy started from (`base`: the module as the command wrote it before), a definition
the user has not changed since is replaced by its new rendering (a test's list of expected paths gains the new
webhook's); one the user changed is kept as it is.
A module that cannot take an addition (its builder has no `.complete()` line any more) is a `MergeError` naming
what is missing, so the command can say which file only `--force` would rewrite.
"""

from __future__ import annotations

import ast

from pyop_scaffold.edit.python_source import add_import
from pyop_scaffold.errors import ProjectError

LINE_LENGTH = 110  # the generated project's ruff line length


class MergeError(ProjectError):
    """The user's module lacks the place an addition goes."""


def merge_module(
    user: str,
    rendered: str,
    *,
    source: str,
    first_party: str,
    chain_function: str | None = None,
    base: str | None = None,
) -> str:
    """`user` plus what `rendered` has that it lacks (see the module docstring); `user` itself when nothing is."""
    text = user if base is None else _refresh_unchanged(user, rendered, base, source=source)
    text = _merge_imports(text, rendered, source=source, first_party=first_party)
    text = _merge_definitions(text, rendered, source=source)
    if chain_function is not None:
        text = _merge_chain(text, rendered, chain_function, source=source)
    return text


def _segments(text: str, source: str) -> dict[str, tuple[int, int, str]]:
    """Top-level functions and classes: name -> (first line index with decorators, end index, their text)."""
    lines = text.splitlines(keepends=True)
    found: dict[str, tuple[int, int, str]] = {}
    for node in _parse(text, source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            end = node.end_lineno or node.lineno
            found[node.name] = (start, end, "".join(lines[start:end]))
    return found


def _refresh_unchanged(user: str, rendered: str, base: str, *, source: str) -> str:
    """Definitions of `user` still as `base` wrote them, replaced by their new rendering (bottom-up, so the line
    numbers of those above stay valid)."""
    old = _segments(base, source)
    new = _segments(rendered, source)
    mine = _segments(user, source)
    lines = user.splitlines(keepends=True)
    for name, (start, end, text) in sorted(mine.items(), key=lambda item: -item[1][0]):
        if name in old and name in new and text == old[name][2] and new[name][2] != text:
            lines[start:end] = new[name][2].splitlines(keepends=True)
    return "".join(lines)


def _parse(text: str, source: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        raise ProjectError(f"cannot edit {source}: not valid Python (line {exc.lineno}: {exc.msg})") from exc


def _merge_imports(user: str, rendered: str, *, source: str, first_party: str) -> str:
    text = user
    for node in _parse(rendered, source).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                text = _ensure_from_import(text, node.module, alias, source=source, first_party=first_party)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in _plain_imports(_parse(text, source)):
                    text = add_import(text, f"import {_alias_text(alias)}", source=source, first_party=first_party)
    return text


def _plain_imports(tree: ast.Module) -> set[str]:
    return {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}


def _alias_text(alias: ast.alias) -> str:
    return f"{alias.name} as {alias.asname}" if alias.asname else alias.name


def _ensure_from_import(text: str, module: str, alias: ast.alias, *, source: str, first_party: str) -> str:
    tree = _parse(text, source)
    same = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == module and n.level == 0]
    if any(_alias_text(a) == _alias_text(alias) for n in same for a in n.names):
        return text
    if not same:
        return add_import(text, f"from {module} import {_alias_text(alias)}", source=source, first_party=first_party)
    node = same[0]
    names = sorted({_alias_text(a) for a in node.names} | {_alias_text(alias)}, key=_isort_name_key)
    lines = text.splitlines(keepends=True)
    start, end = node.lineno - 1, node.end_lineno or node.lineno
    one_line = f"from {module} import {', '.join(names)}"
    statement = (
        one_line + "\n"
        if len(one_line) <= LINE_LENGTH
        else f"from {module} import (\n" + "".join(f"    {name},\n" for name in names) + ")\n"
    )
    return "".join([*lines[:start], statement, *lines[end:]])


def _isort_name_key(name: str) -> tuple[int, str]:
    """isort's `order-by-type`: CONSTANTS, then Classes, then functions and variables."""
    bare = name.split(" ")[0]
    kind = 0 if bare.isupper() and len(bare) > 1 else 1 if bare[:1].isupper() else 2
    return kind, bare


def _defined_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _merge_definitions(user: str, rendered: str, *, source: str) -> str:
    rendered_lines = rendered.splitlines(keepends=True)
    rendered_body = _parse(rendered, source).body
    text = user
    for index, node in enumerate(rendered_body):
        names = _defined_names(node)
        tree = _parse(text, source)
        present = {name for n in tree.body for name in _defined_names(n)}
        if not names or any(name in present for name in names):
            continue
        previous_end = rendered_body[index - 1].end_lineno if index else 0
        chunk = rendered_lines[previous_end or 0 : node.end_lineno]
        following = next(
            (name for later in rendered_body[index + 1 :] for name in _defined_names(later) if name in present),
            None,
        )
        text = _insert_chunk(text, tree, chunk, before=following)
    return text


def _insert_chunk(text: str, tree: ast.Module, chunk: list[str], *, before: str | None) -> str:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    if before is None:
        return "".join([*lines, *chunk])
    position = next(i for i, n in enumerate(tree.body) if before in _defined_names(n))
    at = tree.body[position - 1].end_lineno or 0 if position else 0
    return "".join([*lines[:at], *chunk, *lines[at:]])


def _merge_chain(user: str, rendered: str, function: str, *, source: str) -> str:
    """The builder lines (`.with_x(...)`) of `function` the user's copy lacks, above its `.complete()` line."""
    wanted = _chain_lines(rendered, function, source)
    have = _chain_lines(user, function, source)
    missing = [line for line in wanted if line.strip() not in {h.strip() for h in have}]
    if not missing:
        return user
    lines = user.splitlines(keepends=True)
    node = _function(_parse(user, source), function)
    complete = None
    if node is not None:
        complete = next(
            (i for i in range(node.lineno - 1, node.end_lineno or node.lineno) if lines[i].strip() == ".complete()"),
            None,
        )
    if complete is None:
        raise MergeError(
            f"cannot add to {source}: {function}() has no `.complete()` line to put "
            f"{', '.join(line.strip() for line in missing)} above"
        )
    indent = lines[complete][: len(lines[complete]) - len(lines[complete].lstrip())]
    new = [f"{indent}{line.strip()}\n" for line in missing]
    return "".join([*lines[:complete], *new, *lines[complete:]])


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    return next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name), None
    )


def _chain_lines(text: str, function: str, source: str) -> list[str]:
    node = _function(_parse(text, source), function)
    if node is None:
        return []
    lines = text.splitlines()[node.lineno - 1 : node.end_lineno]
    return [line for line in lines if line.strip().startswith(".with_")]
