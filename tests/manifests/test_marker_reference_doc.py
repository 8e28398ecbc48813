"""docs/reference/markers.md lists every marker of the registry, as rendered from it."""

from __future__ import annotations

from pathlib import Path

from pyop_scaffold.manifests.markers.reference import BEGIN, END, render_table
from pyop_scaffold.manifests.markers.registry import MARKERS

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference" / "markers.md"


def test_the_committed_table_is_what_the_registry_renders() -> None:
    text = DOC.read_text()
    table = text.split(BEGIN + "\n", 1)[1].split(END, 1)[0]
    assert table == render_table(), "run: python -m pyop_scaffold.manifests.markers.reference docs/reference/markers.md"


def test_every_marker_and_alias_is_in_the_doc() -> None:
    text = DOC.read_text()
    for definition in MARKERS:
        assert f"`+{definition.name}" in text, definition.name
        for alias in definition.aliases:
            assert f"`+{alias}`" in text, alias
