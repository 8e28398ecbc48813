"""JSON-like data as Python source laid out as ruff's formatter lays it out, for values scaffolds put in code.

A generated test's sample object must pass the project's `ruff check` and `ruff format --check`: a value that fits
in the line stays on it, a longer one is split one item per line with a trailing comma, recursively.
"""

from __future__ import annotations

import json
import re

LINE_LENGTH = 110  # the generated project's ruff line length (project_templates/init pyproject.toml)


def python_literal(value: object, *, indent: int = 0, prefix_width: int = 0) -> str:
    """`value` (dicts, lists, str, int, float, bool, None) as a Python expression starting after `prefix_width`
    characters of a line indented by `indent` spaces."""
    flat = _flat(value)
    if indent + prefix_width + len(flat) <= LINE_LENGTH or not isinstance(value, dict | list) or not value:
        return flat
    inner = " " * (indent + 4)
    if isinstance(value, dict):
        items = [
            f"{inner}{_flat(key)}: {python_literal(item, indent=indent + 4, prefix_width=len(_flat(key)) + 2)},"
            for key, item in value.items()
        ]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    items = [f"{inner}{python_literal(item, indent=indent + 4)}," for item in value]
    return "[\n" + "\n".join(items) + "\n" + " " * indent + "]"


def _flat(value: object) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str | int | float):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flat(k)}: {_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as a Python literal")


def import_sections(third_party: list[str], first_party: list[str]) -> str:
    """Import statements in ruff's isort order: the third-party section, a blank line, the first-party one;
    in each, `import x` lines before `from x import` lines, by module name in natural order (`v2` before `v10`)."""

    def ordered(statements: list[str]) -> list[str]:
        def key(statement: str) -> tuple[bool, list[str | int]]:
            module = statement.split()[1].lower()
            return statement.startswith("from "), [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", module)]

        return sorted(dict.fromkeys(statements), key=key)

    sections = [ordered(section) for section in (third_party, first_party) if section]
    return "\n\n".join("\n".join(section) for section in sections)
