"""Adding a requirement to the project's runtime dependencies (pyproject.toml), for `--external-api-module` and for
the extra an aggregated API server's image needs (`pyop create apiserver`).

Kubebuilder runs `go get <module>@<version>` for an external kind; a Python project declares the distribution in
`[project] dependencies`, which its image installs (`make lock`). The line `pyop init` writes is edited in place;
a dependencies table the user reshaped is left alone, with a note saying what to add.
"""

from __future__ import annotations

import re

from pyop_scaffold.commands.project_files import read_text
from pyop_scaffold.render.changeset import ChangeSet

PYPROJECT = "pyproject.toml"
# One line of quoted requirements; a quoted one may hold brackets itself (`"pyop-kit[apiserver]~=0.1"`).
_ONE_LINE = re.compile(r'^dependencies = \[(?P<items>(?:"[^"\n]*"|[^\]"\n])*)\]$', re.MULTILINE)


def add_dependency(changes: ChangeSet, requirement: str, why: str = "the external kind's models") -> list[str]:
    """Plan the edit; returns notes for the report (empty when the requirement is, or now will be, declared).
    ``why``: what needs it, for the note asking the user to add it by hand."""
    text = read_text(changes, PYPROJECT)
    match = _ONE_LINE.search(text) if text is not None else None
    if text is None or match is None:
        return [f"add {requirement!r} to the dependencies in {PYPROJECT} ({why})"]
    items = [item.strip() for item in match["items"].split(",") if item.strip()]
    quoted = f'"{requirement}"'
    if quoted in items:
        return []
    line = f"dependencies = [{', '.join([*items, quoted])}]"
    changes.update_file(PYPROJECT, text[: match.start()] + line + text[match.end() :])
    return []
