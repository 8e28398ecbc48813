"""Reused texts of repeated values: the written YAML stays exactly PyYAML's, wherever the value sits."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyop_scaffold.manifests import yaml_output
from pyop_scaffold.manifests.builtin import builtin_schema
from pyop_scaffold.manifests.yaml_output import _Dumper, dump_documents


def _pyyaml(documents: list[Any], header: str = "") -> str:
    """The reference: PyYAML's own dump of each document; the same stream without reuse where a document ends
    in a `|+` block (in one stream libyaml opens the next document without the `...` that ends a stream)."""
    without_reuse = yaml_output._dump(documents, header, reuse=False)
    assert without_reuse is not None
    parts = [header]
    for document in documents:
        parts.append("---\n")
        parts.append(
            yaml.dump(
                document, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=4096, allow_unicode=True
            )
        )
    separate = "".join(parts)
    if separate != without_reuse:
        assert separate.replace("\n...\n---\n", "\n---\n") == without_reuse
    return without_reuse


@pytest.fixture
def reuse_everything(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every non-empty mapping value is a reuse candidate, and nothing is remembered from other tests."""
    monkeypatch.setattr(yaml_output, "_MIN_REUSED_BYTES", 0)
    for table in (yaml_output._TEXTS, yaml_output._SEEN, yaml_output._SHIFTED):
        table.clear()
    yield
    for table in (yaml_output._TEXTS, yaml_output._SEEN, yaml_output._SHIFTED):
        table.clear()


TEXTS = [
    "plain",
    "two\nlines",
    "ends with a break\n",
    "keeps\ntwo breaks\n\n",
    "\n starts with a break",
    "  leading spaces\nsecond",
    "empty\n\nlines\n\n\ninside",
    "trailing space \nline",
    "é ü 漢字\nunicode",
    "x: y",
    "- dash",
    "'quoted'",
    "",
    "yes",
    "long " * 900,
    "long words " * 500 + "\nand a second line",
]
keys = st.sampled_from(["a", "b", "spec", "items", "x-kubernetes-validations", "on", "1", "- x", "k" * 70, ""])
scalars = st.one_of(
    st.sampled_from(TEXTS),
    st.text(max_size=12),
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, width=32),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=24,
)


def _with_repeats(shared: Any, depth_keys: list[str]) -> list[Any]:
    """Documents holding copies of `shared` under keys, in lists and at several depths."""
    documents: list[Any] = [{"value": copy.deepcopy(shared)}]
    nested: Any = {"last": copy.deepcopy(shared)}
    for key in depth_keys:
        nested = {key: nested, "again": copy.deepcopy(shared), "listed": [{"item": copy.deepcopy(shared)}]}
        documents.append(copy.deepcopy(nested))
    documents.append([[{"deep": {"value": copy.deepcopy(shared)}}]])
    return documents


@pytest.mark.usefixtures("reuse_everything")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shared=st.one_of(st.dictionaries(keys, values, min_size=1, max_size=5), st.lists(values, min_size=1)))
def test_repeated_values_are_written_as_pyyaml_writes_them(shared: Any) -> None:
    documents = _with_repeats(shared, ["a", "spec", "b", "items"])
    assert dump_documents(documents, "# header\n") == _pyyaml(documents, "# header\n")
    assert dump_documents(documents) == _pyyaml(documents)  # all reused now


@pytest.mark.usefixtures("reuse_everything")
@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_every_kind_of_text_in_a_repeated_value(text: str) -> None:
    shared = {"description": text, "list": [text, {"inner": text}], "map": {"k": text}}
    documents = _with_repeats(shared, ["a", "b", "c", "d", "e"])
    for _ in range(2):
        assert dump_documents(documents) == _pyyaml(documents)


def test_a_repeated_pod_template_is_reused_and_written_exactly() -> None:
    template = builtin_schema("io.k8s.api.core.v1.PodTemplateSpec")
    documents = [
        {"spec": {"properties": {"template": copy.deepcopy(template)}}},
        {"a": {"b": {"c": {"template": copy.deepcopy(template)}}}},
        {"listed": [{"template": copy.deepcopy(template), "other": 1}]},
        {"spec": {"properties": {"template": copy.deepcopy(template)}}},
    ]
    expected = [_pyyaml([document]) for document in documents]
    assert [dump_documents([document]) for document in documents] == expected
    assert any(text is not None and "containers:" in text for text in yaml_output._TEXTS.values())
    assert [dump_documents([document]) for document in documents] == expected


@pytest.mark.usefixtures("reuse_everything")
def test_data_holding_the_placeholder_text_is_written_as_it_is() -> None:
    sneaky = {"value": f"{yaml_output._TOKEN}0z", "nested": {"x": 1}}
    documents = [{"a": copy.deepcopy(sneaky), "b": copy.deepcopy(sneaky), "c": {"d": copy.deepcopy(sneaky)}}]
    for _ in range(3):
        assert dump_documents(documents) == _pyyaml(documents)
