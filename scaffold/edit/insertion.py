"""Insertion points: `# +kubebuilder:scaffold:<name>` comments in source files where later scaffolds add lines.

As in Kubebuilder, each scaffold inserts its code right above the marker, with the marker's indentation, and only
if the exact lines are not already there, so re-running a command never duplicates code.
"""

from __future__ import annotations

from pyop_scaffold.errors import ProjectError

MARKER_PREFIX = "+kubebuilder:scaffold:"


def insert_at_marker(text: str, marker: str, snippet: str, *, source: str) -> str:
    """Insert `snippet` (one or more lines) above the `+kubebuilder:scaffold:<marker>` comment in `text`."""
    lines = text.splitlines(keepends=True)
    tag = MARKER_PREFIX + marker
    index = next((i for i, line in enumerate(lines) if line.strip().lstrip("#").strip() == tag), None)
    if index is None:
        raise ProjectError(
            f"cannot add to {source}: its insertion point '# {tag}' is missing; restore that comment line"
        )
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    new_lines = [f"{indent}{line}\n" if line else "\n" for line in snippet.rstrip("\n").split("\n")]
    if _contains(lines, [line.strip() for line in new_lines]):
        return text
    return "".join(lines[:index] + new_lines + lines[index:])


def _contains(lines: list[str], block: list[str]) -> bool:
    stripped = [line.strip() for line in lines]
    size = len(block)
    return any(stripped[i : i + size] == block for i in range(len(stripped) - size + 1))


def has_marker(text: str, marker: str) -> bool:
    tag = MARKER_PREFIX + marker
    return any(line.strip().lstrip("#").strip() == tag for line in text.splitlines())


def ensure_marker_above(text: str, marker: str, anchor: str, *, source: str) -> str:
    """Add the insertion point `marker` right above the first line reading `anchor` (stripped), if it is missing.

    For files scaffolded before pyop had that insertion point; the anchor is a line those files are known to have.
    """
    if has_marker(text, marker):
        return text
    lines = text.splitlines(keepends=True)
    index = next((i for i, line in enumerate(lines) if line.strip() == anchor), None)
    if index is None:
        raise ProjectError(
            f"cannot add to {source}: it has neither the insertion point '# {MARKER_PREFIX}{marker}' nor the line "
            f"{anchor!r} to put it above; add that comment where the new code belongs"
        )
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    return "".join([*lines[:index], f"{indent}# {MARKER_PREFIX}{marker}\n", *lines[index:]])
