"""The schema walks of ``pyop.api.managedfields.typed`` (``to_field_set``, ``merge``, ``compare``) give what their
general form gives (managedfields_reference: the same walks before their shortcuts: scalars decided inline, child
types looked up once per map, maps copied on their first change), on generated pairs of values over a schema with
every kind of node: structs, string maps, map lists (one key, two keys, a defaulted key), sets, atomic lists and
maps, preserved unknown fields and int-or-string. Results must be equal, errors the same, and a merge that changes
nothing must return the live value itself (callers skip unchanged subtrees by identity)."""

from __future__ import annotations

import copy
import json
from typing import Any
from unittest import mock

import managedfields_reference as reference
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pyop.api import managedfields as mf
from pyop.api.managedfields import ownership, typed

ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}, "b": {"type": "string"}},
}
SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "a": {
                    "type": "object",
                    "properties": {
                        "b": {"type": "string"},
                        "c": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                },
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": ITEM,
                },
                "pairs": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name", "port"],
                    "items": {**ITEM, "properties": {**ITEM["properties"], "port": {"type": "integer", "default": 1}}},
                },
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "sel": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "additionalProperties": {"type": "string"},
                },
                "any": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "n": {"x-kubernetes-int-or-string": True},
            },
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}
TYPES = [mf.custom_resource_type(SCHEMA), mf.builtin_type("io.k8s.api.core.v1.Service"), mf.Type(mf.schema.UNTYPED)]

KEYS = st.sampled_from(["a", "b", "c", "name", "port", "x"])
SCALARS = st.one_of(
    st.sampled_from(["", "a", "b"]), st.integers(0, 2), st.booleans(), st.none(), st.sampled_from([1.0, 0.5])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=8,
)
ITEMS = st.one_of(
    st.fixed_dictionaries({"name": st.sampled_from(["p", "q"])}, optional={"port": st.integers(1, 2), "b": SCALARS}),
    VALUES,
)
SPEC = st.fixed_dictionaries(
    {},
    optional={
        "a": st.one_of(st.fixed_dictionaries({}, optional={"b": SCALARS, "c": VALUES}), VALUES),
        "ports": st.one_of(st.lists(ITEMS, max_size=3), VALUES),
        "pairs": st.lists(ITEMS, max_size=3),
        "tags": st.one_of(st.lists(SCALARS, max_size=3), VALUES),
        "args": st.lists(SCALARS, max_size=2),
        "sel": VALUES,
        "any": VALUES,
        "n": VALUES,
        "x": VALUES,
    },
)
OBJECTS = st.fixed_dictionaries(
    {},
    optional={
        "spec": st.one_of(SPEC, VALUES),
        "status": VALUES,
        "metadata": st.fixed_dictionaries({}, optional={"name": SCALARS, "labels": VALUES, "managedFields": VALUES}),
        "ports": st.lists(ITEMS, max_size=2),  # a Service's spec.ports-like list where the CR has none
    },
)


def _outcome(call: Any) -> Any:
    """The result as JSON text (so that 1, 1.0 and True differ) or the error's message."""
    try:
        return ("ok", json.dumps(call()))
    except mf.SchemaError as error:
        return ("error", str(error))


def _retyped(value: Any) -> Any:
    """An equal value of other types (ints as floats, bools as ints) and new string objects: equal, not identical."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return float(value)
    if isinstance(value, str):
        return "".join(list(value))
    if isinstance(value, list):
        return [_retyped(item) for item in value]
    if isinstance(value, dict):
        return {key: _retyped(item) for key, item in value.items()}
    return value


def _pairs() -> st.SearchStrategy[tuple[Any, Any]]:
    independent = st.tuples(OBJECTS, OBJECTS)
    shared = OBJECTS.map(lambda obj: (obj, obj))
    copied = OBJECTS.map(lambda obj: (obj, copy.deepcopy(obj)))
    partly = st.tuples(OBJECTS, OBJECTS).map(lambda pair: (pair[0], {**pair[0], **pair[1]}))
    retyped = OBJECTS.map(lambda obj: (obj, _retyped(obj)))
    return st.one_of(independent, shared, copied, partly, retyped)


@settings(max_examples=700, deadline=None)
@given(_pairs(), st.sampled_from(TYPES))
def test_field_sets_merges_and_comparisons_are_the_general_walks(pair: tuple[Any, Any], t: mf.Type) -> None:
    live, applied = pair
    for value in (live, applied):
        assert _outcome(lambda v=value: typed.to_field_set(v, t)) == _outcome(
            lambda v=value: reference.to_field_set(v, t)
        )
        fast = _outcome(lambda v=value: typed.to_field_set(v, t, allow_duplicates=True))
        assert fast == _outcome(lambda v=value: reference.to_field_set(v, t, allow_duplicates=True))
    merged = _outcome(lambda: typed.merge(live, applied, t))
    assert merged == _outcome(lambda: reference.merge(live, applied, t))
    new = applied
    if merged[0] == "ok":
        new = typed.merge(live, applied, t)
        assert (new is live) == (reference.merge(live, applied, t) is live)
    for skip in (frozenset(), frozenset({"managedFields"})):
        fast_comparison = typed.compare(live, new, t, skip_metadata=skip)
        general_comparison = reference.compare(live, new, t, skip_metadata=skip)
        assert (fast_comparison.added, fast_comparison.modified, fast_comparison.removed) == (
            general_comparison.added,
            general_comparison.modified,
            general_comparison.removed,
        )


_SHARED = {"status": None}


@settings(max_examples=700, deadline=None)
@example((_SHARED, _SHARED), TYPES[0])  # one object as both: merge returns it as is (its null is not applied)
@given(_pairs(), st.sampled_from(TYPES))
def test_an_applys_single_walk_is_its_merge_field_set_and_comparison(pair: tuple[Any, Any], t: mf.Type) -> None:
    live, applied = pair
    fused = typed.merge_and_compare(live, applied, t)
    if fused is None:
        return  # the general path answers (typed.merge, to_field_set and compare, checked above)
    merged, fields, comparison = fused
    general = reference.merge(live, applied, t)
    assert json.dumps(merged) == json.dumps(general) and (merged is live) == (general is live)
    assert json.dumps(fields) == json.dumps(reference.to_field_set(applied, t))  # in order: stored as written
    expected = reference.compare(live, general, t, skip_metadata=frozenset({"managedFields"}))
    assert (comparison.added, comparison.modified, comparison.removed) == (
        expected.added,
        expected.modified,
        expected.removed,
    )


def test_an_apply_of_a_typical_object_takes_the_single_walk() -> None:
    live = {"apiVersion": "v1", "metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"a": {"b": "x"}, "n": 1}}
    config = {"apiVersion": "v1", "metadata": {"name": "a"}, "spec": {"a": {"b": "y"}, "tags": ["a"]}}
    fused = typed.merge_and_compare(live, config, TYPES[0])
    assert fused is not None
    merged, fields, comparison = fused
    assert merged["spec"] == {"a": {"b": "y"}, "n": 1, "tags": ["a"]} and merged["metadata"] is live["metadata"]
    assert comparison.modified == {"f:spec": {"f:a": {"f:b": {}}}}
    assert comparison.added == {"f:spec": {"f:tags": {".": {}, 'v:"a"': {}}}}
    assert fields["f:spec"] == {"f:a": {"f:b": {}}, "f:tags": {'v:"a"': {}}}


CREATOR = mf.Manager("creator", mf.UPDATE, "v1", {}, "", "t1")
APPLIER = mf.Manager("applier", mf.APPLY, "v1", {}, "", "t2")
AGAIN = mf.Manager("applier", mf.APPLY, "v1", {}, "", "t3")


def _applied(live: Any, config: Any, t: mf.Type, managers: mf.Managers, force: bool, scope: mf.Scope) -> Any:
    """An apply's outcome as text: the object and every manager's fields (in order) and time, or the error."""
    try:
        merged, result = ownership.apply(live, config, t, managers, AGAIN, force=force, scope=scope)
    except (mf.SchemaError, mf.ApplyConflict) as error:
        return ("error", type(error).__name__, str(error))
    return ("ok", json.dumps(merged), json.dumps([(i, m.fields, m.time) for i, m in result.items()]))


@settings(max_examples=400, deadline=None)
@example(  # a null status on the main resource: removed, but not this write's to own (the entry keeps its time)
    {"status": {"a": 1}, "spec": {"x": 1}},
    {"spec": {"x": 1}},
    {"spec": {"x": 1}, "status": None},
    TYPES[0],
    False,
    mf.Scope(drop=frozenset({"f:status"})),
)
@given(
    OBJECTS,
    OBJECTS,
    st.one_of(OBJECTS, st.tuples(OBJECTS, OBJECTS).map(lambda pair: {**pair[0], **pair[1]})),
    st.sampled_from(TYPES),
    st.booleans(),
    st.sampled_from([mf.Scope(), mf.Scope(drop=frozenset({"f:status"}))]),
)
def test_an_apply_through_the_single_walk_is_the_general_apply(
    live: Any, first: Any, second: Any, t: mf.Type, force: bool, scope: mf.Scope
) -> None:
    """A second apply (pruning what the first applied and the second does not, conflicting with the creator's
    fields unless forced) answers the same with ``merge_and_compare`` and with it disabled (the general path)."""
    try:
        managers = ownership.create(live, t, {}, CREATOR, scope)
        live, managers = ownership.apply(live, first, t, managers, APPLIER, force=True, scope=scope)
    except mf.SchemaError:
        return
    fast = _applied(live, second, t, managers, force, scope)
    with mock.patch.object(ownership, "merge_and_compare", lambda *args: None):
        general = _applied(live, second, t, managers, force, scope)
    assert fast == general
