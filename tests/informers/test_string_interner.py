"""The cache's string interner returns an equal object whatever it is given, sharing equal strings."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pyop.informers import StringInterner

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=80)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=25,
)


@given(st.dictionaries(st.text(max_size=8), VALUES, max_size=5))
def test_interning_returns_an_equal_object(obj: dict[str, Any]) -> None:
    assert repr(StringInterner(max_values=7)(obj)) == repr(obj)  # equal, and of the same types


class Label(str):
    pass


def test_strings_are_shared_at_every_depth_and_other_types_kept_equal() -> None:
    interner = StringInterner()

    def build() -> dict[str, Any]:
        name = "".join(["w", "1"])
        return {
            "metadata": OrderedDict(name=name, labels={"app": Label("x")}, finalizers=[name, ("a", "b")]),
            "spec": {"replicas": 3, "ratio": 0.5, "on": True, "none": None, "items": [[name], {"k": name}]},
        }

    first, second = interner(build()), interner(build())
    assert first == second == build()
    assert type(first["metadata"]) is dict  # converted as before: the cache holds plain dicts
    assert first["metadata"]["name"] is second["metadata"]["name"]
    assert first["metadata"]["finalizers"][0] is second["metadata"]["finalizers"][0]
    assert first["spec"]["items"][0][0] is second["spec"]["items"][0][0]
    assert first["spec"]["items"][1]["k"] is second["spec"]["items"][1]["k"]


def test_long_strings_are_left_alone() -> None:
    interner = StringInterner(max_value_length=4)
    interner({"v": "short", "w": "tiny"})
    assert interner._values == {"tiny": "tiny"}


@given(
    st.dictionaries(st.text(max_size=8), VALUES, max_size=5),
    st.dictionaries(st.text(max_size=8), VALUES, max_size=5),
    st.lists(st.booleans(), min_size=5, max_size=5),
)
def test_interning_against_a_previous_version_returns_an_equal_object(
    obj: dict[str, Any], other: dict[str, Any], kept: list[bool]
) -> None:
    """The previous version shares some of the new version's parts (equal copies) and differs elsewhere."""
    previous = dict(other)
    for (key, value), keep in zip(obj.items(), kept, strict=False):
        if keep:
            previous[key] = copy.deepcopy(value)
    assert repr(StringInterner(max_values=7)(obj, previous)) == repr(obj)  # equal, and of the same types


def test_a_new_version_shares_the_unchanged_parts_of_the_version_it_replaces() -> None:
    interner = StringInterner()

    def version(resource_version: str, ready: str) -> dict[str, Any]:
        return {
            "metadata": {"name": "w", "resourceVersion": resource_version, "labels": {"app": "x"}},
            "spec": {"size": 3, "ports": [{"name": "http", "port": 80}]},
            "status": {"conditions": [{"type": "Ready", "status": ready}], "replicas": 1},
        }

    old = interner(version("1", "False"))
    new = interner(version("2", "True"), old)
    assert new == version("2", "True")
    assert new["spec"] is old["spec"]  # equal: the cached part itself, not rebuilt
    assert new["metadata"]["labels"] is old["metadata"]["labels"]
    assert new["metadata"] is not old["metadata"] and new["status"] is not old["status"]  # changed: new dicts
    assert new["status"]["conditions"][0]["type"] is old["status"]["conditions"][0]["type"]  # strings still shared
    assert version("1", "False") == old  # the previous version is left as it was
    # a part whose type changed is taken from the new version as it is
    assert interner({"spec": {"size": 3.0}}, {"spec": {"size": 3}}) == {"spec": {"size": 3.0}}
    assert type(interner({"spec": {"size": 3.0}}, {"spec": {"size": 3}})["spec"]["size"]) is float  # 3.0 == 3


def test_numbers_and_booleans_that_python_finds_equal_are_not_taken_for_each_other() -> None:
    interner = StringInterner()
    for before, after in [(1, True), (True, 1), (3, 3.0), (0, False)]:
        fresh = interner({"spec": {"value": [after]}}, {"spec": {"value": [before]}})
        assert type(fresh["spec"]["value"][0]) is type(after)
