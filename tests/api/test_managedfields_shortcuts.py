"""The managedFields shortcuts that replace a general computation by a cheaper one give its very answer:
FieldsV1 key elements written without ``json.dumps``, the stripped fields taken out by lookups instead of
``difference``, the strategy's reset fields filtered without a copy, and managers given their new entry as source.
Each compares the shortcut with the general path on generated input and fails when the shortcut is broken."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pyop.api import managedfields as mf
from pyop.api.managedfields import fieldpath, ownership, typed
from pyop.api.managedfields.fieldpath import SELF, FieldSet

JSON_SCALARS = st.one_of(
    st.text(max_size=4),
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=8,
)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


@settings(max_examples=400, deadline=None)
@given(JSON)
def test_values_are_written_as_json_dumps_writes_them(value: Any) -> None:
    assert fieldpath.encode_value(value) == _dumps(value)
    assert fieldpath.value_element(value) == "v:" + _dumps(value)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=4), JSON, max_size=3))
def test_key_elements_are_json_dumps_of_the_key_fields(keys: dict[str, Any]) -> None:
    assert fieldpath.key_element(keys) == "k:" + _dumps(keys)


NAMES = st.sampled_from(
    ["f:apiVersion", "f:kind", "f:metadata", "f:name", "f:generation", "f:labels", "f:uid", "f:spec", "f:a"]
)


def _field_sets() -> st.SearchStrategy[FieldSet]:
    leaf: st.SearchStrategy[FieldSet] = st.just({})
    return st.recursive(
        st.dictionaries(NAMES, leaf, max_size=4),
        lambda inner: st.dictionaries(
            NAMES, st.one_of(leaf, inner, inner.filter(bool).map(lambda d: {SELF: {}, **d})), max_size=4
        ),
        max_leaves=12,
    )


@settings(max_examples=600, deadline=None)
@given(_field_sets())
def test_taking_the_stripped_fields_out_is_the_difference_with_them(fields: FieldSet) -> None:
    general = fieldpath.difference(fields, ownership._STRIPPED)  # noqa: SLF001
    fast = ownership.without_stripped(fields)
    assert fast == general
    assert (fast is fields) == (general is fields)  # "nothing taken out" is told by identity by its callers


@settings(max_examples=400, deadline=None)
@example({"f:spec": {}, "f:a": {}}, frozenset({"f:spec", "f:a"}), frozenset({"f:a"}))
@example({"f:spec": {}, "f:a": {}}, None, frozenset({"f:a"}))
@given(
    _field_sets(),
    st.one_of(st.none(), st.frozensets(NAMES, max_size=3)),
    st.frozensets(NAMES, max_size=2),
)
def test_filtering_top_level_fields_keeps_what_a_comprehension_keeps(
    fields: FieldSet, keep: frozenset[str] | None, drop: frozenset[str]
) -> None:
    expected = {key: value for key, value in fields.items() if key not in drop and (keep is None or key in keep)}
    filtered = fieldpath.filter_top_level(fields, keep, drop)
    assert filtered == expected and list(filtered) == list(expected)
    assert (filtered is fields) == (len(expected) == len(fields))


MANAGER_NAMES = st.sampled_from(["a", "b", "c"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(MANAGER_NAMES, st.sampled_from([mf.APPLY, mf.UPDATE]), st.sampled_from(["t1", "t2", None])),
        max_size=4,
        unique_by=lambda item: item[:2],
    ),
    st.data(),
)
def test_encoded_managers_decode_to_themselves_and_reuse_their_entries(items: list[Any], data: Any) -> None:
    managers: mf.Managers = {}
    for name, operation, time in items:
        fields = data.draw(st.sampled_from([{}, {"f:spec": {}}, {"f:spec": {SELF: {}, "f:a": {}}}]))
        manager = mf.Manager(name, operation, "example.com/v1", fields, "", time)
        managers[manager.identity] = manager
    entries, decoded = mf.encode_with_managers(managers)
    assert decoded == mf.decode(json.loads(json.dumps(entries)))
    assert [entry["manager"] for entry in entries] == [manager.manager for manager in decoded.values()]
    again, _ = mf.encode_with_managers(decoded)
    assert all(a is b for a, b in zip(again, entries, strict=True))  # the next write reuses every entry
    changed = {identity: ownership._with(m, {"f:other": {}}, m.time) for identity, m in decoded.items()}  # noqa: SLF001
    moved, _ = mf.encode_with_managers(changed)
    assert [entry["fieldsV1"] for entry in moved] == [{"f:other": {}} for _ in entries]


def test_managers_compare_by_value_without_their_source() -> None:
    one = mf.Manager("a", mf.UPDATE, "v1", {"f:spec": {}}, "", "t", source={"manager": "a"})
    same = mf.Manager("a", mf.UPDATE, "v1", {"f:spec": {}}, "", "t")
    other = mf.Manager("a", mf.UPDATE, "v1", {"f:spec": {}}, "", "t2")
    assert one == same and one != other and one.identity == ("a", mf.UPDATE, "v1", "")
    assert mf.Manager("a", mf.APPLY, "v1", {}).identity == ("a", mf.APPLY, "", "")


KEYED = mf.custom_resource_type(
    {
        "type": "object",
        "properties": {
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["port", "name"],
                "items": {"type": "object", "properties": {"name": {"type": "string", "default": "tcp"}}},
            }
        },
    }
).fields["ports"]
KEY_VALUES = st.one_of(st.sampled_from([1, 1.0, True, "1", 0, False, "", None, 2**64]), st.text(max_size=2))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.fixed_dictionaries({}, optional={"port": KEY_VALUES, "name": KEY_VALUES}), max_size=6))
def test_map_list_items_are_keyed_by_the_json_of_their_keys_found_again_or_not(items: list[dict[str, Any]]) -> None:
    """item_element's lookup of elements already written gives each item the element its own key fields make
    (1, 1.0, True and "1" are four keys), as often as it is asked."""
    for _ in range(2):
        for index, item in enumerate(items):
            keys = {name: item.get(name) for name in ("port", "name")}
            if keys["name"] is None:
                keys["name"] = "tcp"
            if keys["port"] is None:
                try:
                    typed.item_element(KEYED, index, item)
                except mf.SchemaError as error:
                    assert 'omits key field "port"' in str(error)
                    continue
                raise AssertionError("an item without its key is refused")
            assert typed.item_element(KEYED, index, item) == "k:" + _dumps(keys)
