"""The acceptance check remembers clean subtrees by content; remembering must never change what it reports.

Each case checks CRDs with the memo as warm as a long `make manifests` leaves it and compares the errors
(types, paths, messages and order) with a run that remembers nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from acceptance_fixtures import base_crd, rich_crd
from test_acceptance_invalid import CASES

from pyop_scaffold.manifests.acceptance import check_crd, openapi_rules
from pyop_scaffold.manifests.acceptance import memo as memo_module


def _forgetful_check(crd: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The errors of a check that skips nothing: every verdict lookup misses."""
    with monkeypatch.context() as patch:
        patch.setattr(memo_module.SchemaMemo, "is_clean", lambda *_args, **_kwargs: False)
        return [str(error) for error in check_crd(crd)]


def _mutated(index: int) -> dict[str, Any]:
    crd = base_crd()
    CASES[index][1](crd)
    return crd


@pytest.fixture
def fresh_memo() -> Iterator[None]:
    memo_module._INTERNED.clear()
    memo_module._CLEAN.clear()
    yield
    memo_module._INTERNED.clear()
    memo_module._CLEAN.clear()


@pytest.mark.usefixtures("fresh_memo")
def test_every_invalid_case_reports_the_same_errors_with_a_warm_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = [_forgetful_check(_mutated(i), monkeypatch) for i in range(len(CASES))]
    # Warm up with the valid CRDs the cases are made from, then check each case twice, forwards and backwards.
    assert check_crd(base_crd()) == []
    assert check_crd(rich_crd()) == []
    for order in (range(len(CASES)), reversed(range(len(CASES)))):
        for i in order:
            got = [str(error) for error in check_crd(_mutated(i))]
            assert got == expected[i], CASES[i][0]


@pytest.mark.usefixtures("fresh_memo")
def test_a_repeated_subtree_is_walked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[str] = []
    original = openapi_rules._node_checks

    def counting(node: dict[str, Any], path: str, *args: Any) -> None:
        walked.append(path)
        original(node, path, *args)

    monkeypatch.setattr(openapi_rules, "_node_checks", counting)
    assert check_crd(rich_crd()) == []
    first = len(walked)
    walked.clear()
    assert check_crd(rich_crd()) == []  # a fresh copy: equal content, other objects
    assert first > 20
    assert walked == []


@pytest.mark.usefixtures("fresh_memo")
def test_nodes_differing_only_in_descriptions_share_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[str] = []
    original = openapi_rules._node_checks
    monkeypatch.setattr(
        openapi_rules, "_node_checks", lambda node, path, *args: (walked.append(path), original(node, path, *args))
    )
    documented = base_crd()
    spec = documented["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["description"] = "FooSpec is the desired state of a Foo."
    spec["properties"]["image"]["description"] = "image to run."
    assert check_crd(documented) == []
    walked.clear()
    spec["description"] = "BarSpec is the desired state of a Bar."
    spec["properties"]["image"]["description"] = "the image the Bar runs."
    assert check_crd(documented) == []
    assert walked == []


@pytest.mark.usefixtures("fresh_memo")
def test_a_description_under_a_junctor_is_still_refused_after_an_empty_one_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def with_junctor_description(text: str) -> dict[str, Any]:
        crd = base_crd()
        props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        props["image"]["allOf"] = [{"maxLength": 10, "description": text}]
        return crd

    assert check_crd(with_junctor_description("")) == []
    errors = [str(error) for error in check_crd(with_junctor_description("why"))]
    assert errors == _forgetful_check(with_junctor_description("why"), monkeypatch)
    assert any("allOf[0].description" in error for error in errors)


@pytest.mark.usefixtures("fresh_memo")
@pytest.mark.parametrize(
    ("good", "bad"),
    [(1, True), (1, 1.5), ("1", 1), ([1], [1, 1]), ({"a": 1}, {"a": "1"})],
    ids=["int-vs-bool", "int-vs-float", "str-vs-int", "list-length", "nested-type"],
)
def test_values_are_keyed_exactly(good: Any, bad: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A default that is valid must not vouch for one equal to it in Python but not in JSON."""

    def with_default(value: Any) -> dict[str, Any]:
        crd = base_crd()
        props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        if isinstance(good, list):
            props["ports"] = {
                "type": "array",
                "x-kubernetes-list-type": "set",
                "items": {"type": "integer"},
                "default": copy.deepcopy(value),
            }
        elif isinstance(good, dict):
            props["limits"] = {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "default": copy.deepcopy(value),
            }
        elif isinstance(good, str):
            props["image"]["default"] = value
        else:
            props["replicas"]["default"] = value
        return crd

    assert check_crd(with_default(good)) == []
    errors = [str(error) for error in check_crd(with_default(bad))]
    assert errors, f"default {bad!r} should be refused"
    assert errors == _forgetful_check(with_default(bad), monkeypatch)


@pytest.mark.usefixtures("fresh_memo")
def test_context_is_part_of_the_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rule is fine below a map list and refused below an atomic list (oldSelf uncorrelatable)."""
    rule_items = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 63}}, "required": ["name"]}
    rule_items["x-kubernetes-validations"] = [{"rule": "self.name == oldSelf.name"}]

    def with_list(list_type: str) -> dict[str, Any]:
        crd = base_crd()
        props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        props["things"] = {
            "type": "array",
            "maxItems": 16,  # bounded: the rule's cost is within budget, only its placement matters
            "x-kubernetes-list-type": list_type,
            "items": copy.deepcopy(rule_items),
        }
        if list_type == "map":
            props["things"]["x-kubernetes-list-map-keys"] = ["name"]
        return crd

    assert check_crd(with_list("map")) == []
    errors = [str(error) for error in check_crd(with_list("atomic"))]
    assert any("uncorrelatable" in error for error in errors)
    assert errors == _forgetful_check(with_list("atomic"), monkeypatch)
