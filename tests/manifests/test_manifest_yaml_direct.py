"""Manifest YAML written as text with libyaml rendering only the scalars: exactly the event writer's output, or
nothing (then the event writer writes it)."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scaffold.manifests import yaml_output
from scaffold.manifests.builtin import builtin_schema
from scaffold.manifests.yaml_output import _TextWriter, dump_documents

TEXTS = [
    "", "plain", "true", "yes", "~", "null", "1", "0x1F", "1e3", ".5", "2001-12-14", "12:30", " leading", "trailing ",
    "- dash", "*x", "&x", "!x", "%x", "@x", "`x", "'q'", '"q"', "{x}", "[x]", "x: y", "a #b", "# c", "é ü 漢字",
    "tab\there", "<<", "?", ":", "two\nlines", "ends with a break\n", "keeps\ntwo breaks\n\n", "\n starts with one",
    "  leading spaces\nsecond", "empty\n\nlines\n\n\ninside", "trailing space \nline", "a\u2028b", "nul\x00",
    "long " * 900, "long words " * 500 + "\nand a second line", "x" * 2048, "x" * 2049, "k0: looks like an entry",
    "line\nk1: looks like an entry",
]  # fmt: skip
SCALARS: list[Any] = [0, -3, 10**20, 1.5, -0.0, 0.0, 1e20, math.inf, -math.inf, math.nan, True, False, None]
KEYS = ["a", "b", "spec", "k0", "k1", "on", "1", "- x", "x: y", "k" * 64, "k" * 65, "", "two\nlines", "é"]

scalars = st.one_of(st.sampled_from(TEXTS + SCALARS), st.text(max_size=12), st.integers(), st.floats())
keys = st.one_of(st.sampled_from(KEYS), st.text(max_size=6))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=30,
)
documents = st.lists(st.dictionaries(keys, values, min_size=1, max_size=5), min_size=1, max_size=3)


def _events_text(docs: list[Any], header: str = "") -> str:
    """The reference: the event writer (libyaml laying out every event; PyYAML's dump, as the tests of it show)."""
    text = yaml_output._dump(docs, header, reuse=False)
    assert text is not None
    return text


@pytest.fixture
def fresh_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Rendered scalars and reused texts from other tests forgotten; every large value a reuse candidate."""
    tables = (
        yaml_output._STR_TEXTS,
        yaml_output._OTHER_TEXTS,
        yaml_output._KEY_TEXTS,
        yaml_output._TEXTS,
        yaml_output._SEEN,
        yaml_output._SHIFTED,
    )
    for table in tables:
        table.clear()
    yield
    for table in tables:
        table.clear()


@pytest.mark.usefixtures("fresh_caches")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=documents)
def test_direct_text_is_the_event_writers_or_nothing(docs: list[Any]) -> None:
    for _ in range(2):  # scalars rendered anew, then remembered
        direct = _TextWriter.dump(docs, "# header\n")
        assert direct is None or direct == _events_text(docs, "# header\n")
        assert dump_documents(docs, "# header\n") == _events_text(docs, "# header\n")


@pytest.mark.usefixtures("fresh_caches")
@pytest.mark.parametrize("value", TEXTS + SCALARS, ids=repr)
def test_each_scalar_in_every_place(value: Any) -> None:
    docs = [
        {
            "value": value,
            "list": [value, {"inner": value, "z": [value]}],
            "nested": {"deeper": {"deepest": value}},
            "mapped": [{"a": value, "b": {"c": value}}],
        }
    ]
    for _ in range(2):
        direct = _TextWriter.dump(docs, "")
        assert direct is None or direct == _events_text(docs)
    if isinstance(value, str) and not any(mark in value for mark in "\n\r\x85\u2028\u2029") and len(value) <= 2048:
        assert direct is not None  # one-line texts are written directly wherever they sit


@pytest.mark.usefixtures("fresh_caches")
def test_literal_blocks_under_keys_at_any_depth_are_written_directly() -> None:
    text = "first line\n  indented\n\nafter an empty line"
    docs = [{"a": text, "b": {"c": {"d": text}}, "e": [{"f": text, "g": {"h": text}}]}]
    direct = _TextWriter.dump(docs, "")
    assert direct is not None and direct == _events_text(docs)
    assert "|-" in direct


@pytest.mark.usefixtures("fresh_caches")
def test_what_is_left_to_the_event_writer() -> None:
    assert _TextWriter.dump([["a list"]], "") is None
    assert _TextWriter.dump([{}], "") is None
    assert _TextWriter.dump([{1: "integer key"}], "") is None
    assert _TextWriter.dump([{"k" * 65: "long key"}], "") is None
    assert _TextWriter.dump([{"a": [["nested list"]]}], "") is None
    assert _TextWriter.dump([{"a": ["literal\nblock as an item"]}], "") is None
    assert _TextWriter.dump([{"a": "keeps\nbreaks\n\n"}], "") is None
    assert _TextWriter.dump([{"a": "x" * 2049}], "") is None
    assert _TextWriter.dump([{"a": object()}], "") is None
    for docs in ([["a list"]], [{1: "integer key"}], [{"a": [["nested list"]]}], [{"a": "keeps\nbreaks\n\n"}]):
        assert dump_documents(docs) == _events_text(docs)


@pytest.mark.usefixtures("fresh_caches")
def test_crds_with_a_repeated_pod_template() -> None:
    template = builtin_schema("io.k8s.api.core.v1.PodTemplateSpec")
    docs = [
        {"spec": {"versions": [{"schema": {"properties": {"template": copy.deepcopy(template)}}}], "n": index}}
        for index in range(3)
    ]
    for doc in docs:
        direct = _TextWriter.dump([doc], "")
        assert direct is not None and direct == _events_text([doc])


@pytest.mark.usefixtures("fresh_caches")
def test_caches_dropped_when_full_between_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_output, "_MAX_SHARED_EVENTS", 3)
    yaml_output._STR_TEXTS["remembered"] = ("remembered", None)
    docs = [{"a": "one", "b": "two", "c": {"d": "three", "e": 4, "f": [5.5, None, True]}}]
    assert _TextWriter.dump(docs, "") == _events_text(docs)
    assert "remembered" in yaml_output._STR_TEXTS  # small enough when the stream started
    assert _TextWriter.dump(docs, "") == _events_text(docs)
    assert "remembered" not in yaml_output._STR_TEXTS  # dropped before the next stream, then refilled
    assert "three" in yaml_output._STR_TEXTS
