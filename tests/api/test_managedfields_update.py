"""An Update's bookkeeping through the single walk (``managedfields.changes``) and the per-path ownership lookups
(``ownership._updated_at``) gives what the three-set comparison gave (managedfields_reference_update: the code as
of b8c9b2a over the walk as of 6c99a5d): the record's sets are compare's, key order included, and the managers
after an update encode to the same managedFields, byte for byte, for generated objects, scopes and managers
(a creator, an applier, a status writer, managers owning arbitrary or no fields, writers old and new)."""

from __future__ import annotations

import contextlib
import json
from typing import Any
from unittest import mock

import managedfields_reference as reference
import managedfields_reference_update as reference_update
from hypothesis import given, settings
from hypothesis import strategies as st
from test_managedfields_walks import OBJECTS, TYPES, VALUES, _pairs

from pyop.api import managedfields as mf
from pyop.api.managedfields import changes, ownership
from pyop.api.managedfields.fieldpath import FieldSet, filter_top_level

SCOPES = [
    mf.Scope(),
    mf.Scope(drop=frozenset({"f:status"})),
    mf.Scope(keep=frozenset({"f:status"})),
    mf.Scope(keep=frozenset({"f:spec", "f:status"})),
    mf.Scope(keep=frozenset({"f:metadata"})),
    mf.Scope(keep=frozenset({"f:status"}), drop=frozenset({"f:status"})),
]


def _tweaked(value: Any, data: Any, reshape: bool) -> Any:
    """``value`` with some scalars changed (``reshape``: and, now and then, an entry added or dropped): what an
    update does to the values it already has, on a new object that shares what it did not change."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if reshape and data.draw(st.integers(0, 9)) == 0:
                continue  # dropped
            out[key] = _tweaked(item, data, reshape) if data.draw(st.booleans()) else item
        if reshape and data.draw(st.integers(0, 9)) == 0:
            out[data.draw(st.sampled_from(["a", "b", "name", "x"]))] = data.draw(VALUES)
        return out
    if isinstance(value, list):
        return [_tweaked(item, data, reshape) if data.draw(st.booleans()) else item for item in value]
    return data.draw(st.sampled_from(["a", "b", 1, 2, True, None, 1.0])) if data.draw(st.booleans()) else value


@settings(max_examples=600, deadline=None)
@given(_pairs(), st.sampled_from(TYPES), st.sampled_from(SCOPES))
def test_the_walks_record_is_compares_three_sets(pair: tuple[Any, Any], t: mf.Type, scope: mf.Scope) -> None:
    old, new = pair
    found = changes.changes(old, new, t, scope.keep, scope.drop)
    if scope.keep is not None:
        old = {key: value for key, value in old.items() if "f:" + key in scope.keep}
        new = {key: value for key, value in new.items() if "f:" + key in scope.keep}
    expected = reference.compare(old, new, t, skip_metadata=frozenset({"managedFields"}))
    for built, general in (
        (found.modified_set(), expected.modified),
        (found.added_set(), expected.added),
        (found.removed_set(), expected.removed),
    ):
        assert json.dumps(built) == json.dumps(filter_top_level(general, scope.keep, scope.drop))


CREATOR = mf.Manager("creator", mf.UPDATE, "v1", {}, "", "2026-01-01T00:00:01Z")


def _managers(old: Any, t: mf.Type, data: Any) -> mf.Managers:
    """The creator of ``old`` and maybe others: an applier of part of it, a status writer owning arbitrary fields,
    a manager that owns nothing."""
    managers = ownership.create(old, t, {}, CREATOR, mf.Scope(drop=frozenset({"f:status"})))
    if data.draw(st.booleans()):
        config = {**old, **data.draw(OBJECTS)}
        applier = mf.Manager("applier", mf.APPLY, "v1", {}, "", "2026-01-01T00:00:02Z")
        with contextlib.suppress(mf.SchemaError):
            _, managers = ownership.apply(old, config, t, managers, applier, force=True)
    if data.draw(st.booleans()):
        try:
            fields = ownership.without_stripped(mf.to_field_set(data.draw(OBJECTS), t, allow_duplicates=True))
        except mf.SchemaError:
            fields = {}
        other = mf.Manager("other", mf.UPDATE, "v1", fields, "status", "2026-01-01T00:00:00Z")
        managers = {**managers, other.identity: other}
    return managers


WRITERS = st.sampled_from(
    [
        CREATOR,  # the creator again within the same second
        mf.Manager("creator", mf.UPDATE, "v1", {}, "", "2026-01-01T00:00:09Z"),
        mf.Manager("creator", mf.UPDATE, "v1", {}, "status", "2026-01-01T00:00:09Z"),
        mf.Manager("other", mf.UPDATE, "v1", {}, "status", "2026-01-01T00:00:09Z"),
        mf.Manager("newcomer", mf.UPDATE, "v2", {}, "", "2026-01-01T00:00:09Z"),
    ]
)


def _encoded(managers: mf.Managers) -> str:
    return json.dumps([dict(entry) for entry in mf.encode(managers)])


def _check(old: Any, new: Any, t: mf.Type, managers: mf.Managers, writer: mf.Manager, scope: mf.Scope) -> None:
    fast = ownership.update(old, new, t, managers, writer, scope)
    general = reference_update.update(old, new, t, managers, writer, scope)
    assert _encoded(fast) == _encoded(general)  # the managedFields bytes, entry and key order included
    assert list(fast) == list(general)
    assert (fast is managers) == (general is managers)  # "nothing changed" is told by identity by the caller


@settings(max_examples=700, deadline=None)
@given(OBJECTS, st.sampled_from(["tweak", "other"]), st.sampled_from(TYPES), st.sampled_from(SCOPES), st.data())
def test_an_update_gives_the_reference_managed_fields(
    old: Any, how: str, t: mf.Type, scope: mf.Scope, data: Any
) -> None:
    try:
        managers = _managers(old, t, data)
    except mf.SchemaError:
        return
    new = _tweaked(old, data, reshape=True) if how == "tweak" else data.draw(OBJECTS)
    _check(old, new, t, managers, data.draw(WRITERS), scope)


@settings(max_examples=500, deadline=None)
@given(OBJECTS, st.sampled_from(TYPES), st.sampled_from(SCOPES[:3]), st.booleans(), st.data())
def test_an_update_of_values_in_place_gives_the_reference_managed_fields(
    old: Any, t: mf.Type, scope: mf.Scope, same_second: bool, data: Any
) -> None:
    """The lookups' case: only values change, by their creator, who may have lost some of its fields, with now
    and then another manager owning some of them (or owning nothing: it is dropped)."""
    try:
        managers = ownership.create(old, t, {}, CREATOR, scope)
        if managers and data.draw(st.booleans()):
            kept = _part_of(managers[CREATOR.identity].fields, data)
            managers = {CREATOR.identity: mf.Manager("creator", mf.UPDATE, "v1", kept, "", CREATOR.time)}
        if data.draw(st.integers(0, 3)) == 0:
            owned = managers[CREATOR.identity].fields if managers else {}
            part = data.draw(st.sampled_from([{}, {"f:zz": {}}, *({key: node} for key, node in owned.items())]))
            other = mf.Manager("other", mf.UPDATE, "v1", part, "status", "2026-01-01T00:00:00Z")
            managers = {**managers, other.identity: other}
    except mf.SchemaError:
        return
    writer = CREATOR if same_second else mf.Manager("creator", mf.UPDATE, "v1", {}, "", "2026-01-01T00:00:09Z")
    _check(old, _values_changed(old, data), t, managers, writer, scope)


def _part_of(fields: FieldSet, data: Any) -> FieldSet:
    """``fields`` with some elements (and what is below them) taken away."""
    part: FieldSet = {}
    for key, node in fields.items():
        if data.draw(st.integers(0, 3)) > 0:  # "." too: the element then stays a path to its members
            part[key] = _part_of(node, data) if node and data.draw(st.booleans()) else node
    return part


def _values_changed(value: Any, data: Any) -> Any:
    """``value`` with one or more of its scalars (or nulls; now and then a map or list) set to a different
    scalar, sharing the rest."""
    leaves: list[tuple[Any, ...]] = []

    def collect(node: Any, path: tuple[Any, ...]) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, item in items:
            if isinstance(item, dict | list):
                collect(item, (*path, key))
            if not isinstance(item, dict | list) or data.draw(st.integers(0, 4)) == 0:
                leaves.append((*path, key))

    collect(value, ())
    if not leaves:
        return value
    for path in data.draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=3, unique=True)):
        value = _set(value, path, data)  # (a path below one replaced before ends at that scalar)
    return value


def _set(node: Any, path: tuple[Any, ...], data: Any) -> Any:
    if not isinstance(node, dict | list):
        return node
    copied: Any = dict(node) if isinstance(node, dict) else list(node)
    key = path[0]
    if len(path) == 1:
        copied[key] = data.draw(st.sampled_from(["a", "b", 1, 2, True, None, 1.5]).filter(lambda v: v != node[key]))
    else:
        copied[key] = _set(node[key], path[1:], data)
    return copied


def test_an_update_of_values_in_place_takes_the_lookups_and_keeps_the_writers_fields() -> None:
    """The common update (a value the writer owns changes, generation with it) decides by lookups: no set is
    built, and the writer's entry keeps its very fields with the new time."""
    old = {
        "apiVersion": "v1",
        "metadata": {"name": "a", "generation": 1, "labels": {"x": "1"}},
        "spec": {"a": {"b": "x"}, "n": 1},
    }
    t = TYPES[0]
    managers = ownership.create(old, t, {}, CREATOR)
    new = {**old, "metadata": {**old["metadata"], "generation": 2}, "spec": {"a": {"b": "y"}, "n": 1}}
    writer = mf.Manager("creator", mf.UPDATE, "v1", {}, "", "2026-01-01T00:00:05Z")
    with mock.patch.object(ownership, "_reowned", side_effect=AssertionError("general path")):
        result = ownership.update(old, new, t, managers, writer)
    (entry,) = result.values()
    assert entry.fields is managers[CREATOR.identity].fields and entry.time == writer.time
    found = changes.changes(old, new, t)
    assert found.modified == [("f:metadata", "f:generation"), ("f:spec", "f:a", "f:b")]
    assert not found.added and not found.removed


def test_a_map_replaced_by_a_value_is_owned_anew_by_a_writer_that_owned_only_inside_it() -> None:
    """The writer owned ``spec.a.b`` but not ``spec.a`` itself: replacing the map by a value makes it the owner of
    ``spec.a`` too (the general path), though every changed path was already in its set."""
    old, new = {"spec": {"a": {"b": "x"}}}, {"spec": {"a": "y"}}
    creator = mf.Manager("creator", mf.UPDATE, "v1", {"f:spec": {".": {}, "f:a": {"f:b": {}}}}, "", "t1")
    writer = mf.Manager("creator", mf.UPDATE, "v1", {}, "", "t2")
    _check(old, new, TYPES[2], {creator.identity: creator}, writer, mf.Scope())
    (entry,) = ownership.update(old, new, TYPES[2], {creator.identity: creator}, writer).values()
    assert entry.fields == {"f:spec": {".": {}, "f:a": {".": {}, "f:b": {}}}}


def test_a_writer_owning_a_stripped_field_loses_it_when_it_changes() -> None:
    """A set that holds ``metadata.generation`` (no stored entry does: what nobody may own is taken out) is not
    kept as it is when generation changes: the general path takes it away."""
    old = {"metadata": {"generation": 1}, "spec": {"a": "x"}}
    new = {"metadata": {"generation": 2}, "spec": {"a": "y"}}
    fields = {"f:metadata": {"f:generation": {}}, "f:spec": {".": {}, "f:a": {}}}
    creator = mf.Manager("creator", mf.UPDATE, "v1", fields, "", "t1")
    writer = mf.Manager("creator", mf.UPDATE, "v1", {}, "", "t2")
    _check(old, new, TYPES[0], {creator.identity: creator}, writer, mf.Scope())
    (entry,) = ownership.update(old, new, TYPES[0], {creator.identity: creator}, writer).values()
    assert entry.fields == {"f:spec": {".": {}, "f:a": {}}}
