"""Module docs kept beside the bytecode: what is loaded equals what reading the module gives, and any change to
the source (or a refusal, or Python writing no bytecode) means reading it again."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyop_scaffold.manifests.errors import MarkerError
from pyop_scaffold.manifests.markers import comments, docs_cache

MODULE = textwrap.dedent(
    '''\
    """Widgets.

    +groupName=widgets.example.com
    """

    from typing import Annotated

    from pydantic import Field

    # Callsign is a short name.
    # +kubebuilder:validation:MaxLength=7
    Callsign = Annotated[str, Field(max_length=7)]

    # +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list


    # +kubebuilder:object:root=true
    # +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
    class Widget:
        """Widget is a widget.

        +kubebuilder:subresource:status
        """

        # size of the widget.
        # +kubebuilder:validation:Minimum=1
        # +kubebuilder:validation:Enum=1;2;3
        size: int = 1
        colour: str = "red"
        """colour, as an attribute docstring."""
        # +kubebuilder:default={a: 1, b: [x, y]}
        extra: dict = {}

        class Inner:
            # +optional
            note: str = ""
    '''
)


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    path = tmp_path / "widget_types.py"
    path.write_text(MODULE)
    comments._read_cached.cache_clear()
    yield path
    comments._read_cached.cache_clear()


def _cache_files(path: Path) -> list[Path]:
    return list((path.parent / "__pycache__").glob("*.pyop-docs"))


def _read_fresh(path: Path) -> comments.ModuleDocs:
    """As a new process would: nothing remembered in memory."""
    comments._read_cached.cache_clear()
    return comments.read_module_docs(path)


def test_loaded_docs_equal_read_docs_and_keep_shared_markers(module: Path) -> None:
    read = comments.read_source_docs(module.read_text(), str(module), str(module))
    first = _read_fresh(module)
    assert _cache_files(module)
    loaded = _read_fresh(module)
    assert loaded is not first
    assert loaded == read == first
    assert loaded.classes["Widget"].markers and loaded.fields[("Widget.Inner", "note")].markers
    assert loaded.aliases["Callsign"].description == "Callsign is a short name."
    size_markers = loaded.fields[("Widget", "size")].markers
    assert all(any(marker is other for other in loaded.all_markers) for marker in size_markers)
    assert [m.definition for m in loaded.all_markers] == [m.definition for m in read.all_markers]


def test_an_edit_is_read_again(module: Path) -> None:
    _read_fresh(module)
    module.write_text(MODULE.replace("Minimum=1", "Minimum=2"))  # same size: only the content tells
    edited = _read_fresh(module)
    minimum = next(m for m in edited.fields[("Widget", "size")].markers if m.name.endswith("Minimum"))
    assert minimum.value == 2


def test_nothing_is_written_when_python_writes_no_bytecode(module: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _read_fresh(module)
    assert _cache_files(module) == []


def test_a_refused_module_is_refused_every_time(module: Path) -> None:
    module.write_text(MODULE.replace("Minimum=1", "Minimum=one"))
    for _ in range(2):
        with pytest.raises(MarkerError, match="Minimum"):
            _read_fresh(module)
    assert _cache_files(module) == []


def test_a_damaged_or_foreign_entry_is_ignored(module: Path) -> None:
    expected = _read_fresh(module)
    for content in (b"", b"\x00garbage", __import__("marshal").dumps(((1, 2), ()))):
        for entry in _cache_files(module):
            entry.write_bytes(content)
        assert _read_fresh(module) == expected


def test_another_displayed_path_is_a_miss(module: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _read_fresh(module)
    token = comments.DISPLAY_ROOT.set(module.parent)
    try:
        shown = _read_fresh(module)
    finally:
        comments.DISPLAY_ROOT.reset(token)
    assert shown.path == "widget_types.py"
    assert all(m.location.file == "widget_types.py" for m in shown.all_markers)
    assert docs_cache.load(str(module), module.read_text(), "elsewhere.py") is None
