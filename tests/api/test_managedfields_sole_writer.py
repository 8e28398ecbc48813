"""managedFields after an update by a writer that changed only values it owns and nobody else owns: the shortcut in
ownership._updated (the writer keeps its fields, with the write's time) gives what the general computation gives.

The general path is reached by the same call with a second manager that owns nothing (it is dropped from the
result), so both results can be compared for any fields and changes; then two updates through `update` itself."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.api.managedfields import ownership
from pyop.api.managedfields.fieldpath import SELF, FieldSet
from pyop.api.managedfields.ownership import UPDATE, Manager, is_subset

NAMES = st.sampled_from(["f:spec", "f:status", "f:metadata", "f:a", "f:b", "f:labels", "f:name", "f:kind"])


def _field_sets() -> st.SearchStrategy[FieldSet]:
    """Field sets as the field manager builds them (a member with nothing below is ``{}``, never ``{".": {}}``)."""
    leaf: st.SearchStrategy[FieldSet] = st.just({})
    return st.recursive(
        st.dictionaries(NAMES, leaf, max_size=3),
        lambda inner: st.dictionaries(
            NAMES, st.one_of(leaf, inner, inner.filter(bool).map(lambda d: {SELF: {}, **d})), max_size=3
        ),
        max_leaves=8,
    )


WRITER = Manager("writer", UPDATE, "example.com/v1", {}, "", "2026-01-01T00:00:02Z")
IDLE = Manager("idle", UPDATE, "example.com/v1", {}, "", "2026-01-01T00:00:00Z")


def _general(managers: dict[Any, Manager], changed: FieldSet, removed: FieldSet) -> dict[Any, Manager]:
    result = dict(ownership._updated({**managers, IDLE.identity: IDLE}, WRITER, changed, removed))  # noqa: SLF001
    result.pop(IDLE.identity, None)  # dropped as owning nothing, or kept when nothing changed at all
    return result


def _shape(managers: dict[Any, Manager]) -> dict[Any, tuple[FieldSet, str | None]]:
    return {identity: (manager.fields, manager.time) for identity, manager in managers.items()}


@settings(max_examples=400, deadline=None)
@given(_field_sets(), _field_sets(), st.booleans(), st.booleans())
def test_the_sole_writers_shortcut_agrees_with_the_general_path(
    owned: FieldSet, changed: FieldSet, same_time: bool, remove: bool
) -> None:
    current = Manager(WRITER.manager, UPDATE, WRITER.api_version, owned, "", WRITER.time if same_time else "old")
    managers = {current.identity: current}
    removed: FieldSet = {"f:b": {}} if remove else {}
    fast = ownership._updated(managers, WRITER, changed, removed)  # noqa: SLF001
    assert _shape(fast) == _shape(_general(managers, changed, removed))


def _part_of(fields: FieldSet, data: Any) -> FieldSet:
    """Some of ``fields``' paths (the shortcut's case: the writer changed values it owns)."""
    part: FieldSet = {}
    for key, node in fields.items():
        if key != SELF and data.draw(st.booleans()):
            part[key] = _part_of(node, data) if node and data.draw(st.booleans()) else node
    return part


@settings(max_examples=400, deadline=None)
@given(_field_sets(), st.data(), st.booleans(), st.lists(_field_sets(), max_size=2))
def test_the_shortcut_taken_agrees_with_the_general_path(
    owned: FieldSet, data: Any, same_time: bool, others: list[FieldSet]
) -> None:
    changed = _part_of(owned, data)
    current = Manager(WRITER.manager, UPDATE, WRITER.api_version, owned, "", WRITER.time if same_time else "old")
    managers = {current.identity: current}
    for number, fields in enumerate(others):  # other managers: the status writer, an applier ...
        other = Manager(f"other-{number}", UPDATE, WRITER.api_version, fields, "status", "2026-01-01T00:00:01Z")
        managers[other.identity] = other
    fast = ownership._updated(managers, WRITER, changed, {})  # noqa: SLF001
    assert _shape(fast) == _shape(_general(managers, changed, {}))


@given(_field_sets(), _field_sets())
def test_is_subset_is_what_difference_says(part: FieldSet, whole: FieldSet) -> None:
    from pyop.api.managedfields.fieldpath import difference

    assert is_subset(part, whole) == (not difference(part, whole))


def test_an_update_by_the_sole_writer_keeps_its_fields_and_takes_the_new_time() -> None:
    from pyop.api.managedfields.schema import UNTYPED, Type

    untyped = Type(UNTYPED)
    old = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"color": "red", "n": 1}}
    created = ownership.create(old, untyped, {}, Manager("writer", UPDATE, "example.com/v1", {}, "", "t1"))
    (entry,) = created.values()
    changed_value = {**old, "spec": {"color": "green", "n": 1}}
    after = ownership.update(
        old, changed_value, untyped, created, Manager("writer", UPDATE, "example.com/v1", {}, "", "t2")
    )
    (updated,) = after.values()
    assert updated.fields == entry.fields and updated.time == "t2"
    added_field = {**old, "spec": {"color": "red", "n": 1, "size": 3}}
    grown = ownership.update(
        old, added_field, untyped, created, Manager("writer", UPDATE, "example.com/v1", {}, "", "t3")
    )
    (bigger,) = grown.values()
    assert bigger.fields["f:spec"] == {**entry.fields["f:spec"], "f:size": {}} and bigger.time == "t3"
