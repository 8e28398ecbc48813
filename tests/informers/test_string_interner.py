"""The cache's string interner returns an equal object whatever it is given, sharing equal strings."""

from __future__ import annotations

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
    assert StringInterner(max_values=7)(obj) == obj


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
