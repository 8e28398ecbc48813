"""An apply's single walk through lists (``typed._merge_list``: map lists and sets merged, filled in and compared
in one pass) gives what the general walks give (managedfields_reference: the walks as of 6c99a5d): the merged
object (the live list itself when nothing changed), the configuration's field set in its order and the
comparison, on lists a schema can place: Deployment containers with their ports and env (map lists in a map list,
a defaulted key), a custom resource's map lists with one and two keys and a set. And a whole second apply
(pruning, conflicts, force) answers the same with the single walk and without it."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import managedfields_reference as reference
from hypothesis import given, settings
from hypothesis import strategies as st
from test_managedfields_walks import SCHEMA

from pyop.api import managedfields as mf
from pyop.api.managedfields import ownership, typed

DEPLOYMENT = mf.builtin_type("io.k8s.api.apps.v1.Deployment")
CUSTOM = mf.custom_resource_type(SCHEMA)

SMALL = st.sampled_from(["a", "b", "c"])
SCALARS = st.one_of(SMALL, st.integers(1, 2), st.none())

PORTS = st.lists(
    st.fixed_dictionaries(
        {"containerPort": st.integers(80, 81)},
        optional={"protocol": st.sampled_from(["TCP", "UDP"]), "name": SMALL, "hostPort": st.integers(1, 2)},
    ),
    max_size=3,
    unique_by=lambda port: (port["containerPort"], port.get("protocol", "TCP")),  # TCP: the key's default
)
ENV = st.lists(
    st.fixed_dictionaries({"name": SMALL}, optional={"value": SCALARS}), max_size=3, unique_by=lambda e: e["name"]
)
CONTAINERS = st.lists(
    st.fixed_dictionaries(
        {"name": SMALL},
        optional={"image": SMALL, "ports": PORTS, "env": ENV, "args": st.lists(SMALL, max_size=2)},
    ),
    max_size=3,
    unique_by=lambda container: container["name"],
)
DEPLOYMENTS = st.fixed_dictionaries(
    {"apiVersion": st.just("apps/v1"), "kind": st.just("Deployment")},
    optional={
        "metadata": st.fixed_dictionaries({"name": st.just("d")}, optional={"labels": st.dictionaries(SMALL, SMALL)}),
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "replicas": st.integers(1, 2),
                "template": st.fixed_dictionaries(
                    {}, optional={"spec": st.fixed_dictionaries({}, optional={"containers": CONTAINERS})}
                ),
            },
        ),
    },
)
ITEMS = st.fixed_dictionaries({"name": SMALL}, optional={"port": st.integers(1, 2), "b": SCALARS})
CUSTOM_OBJECTS = st.fixed_dictionaries(
    {"apiVersion": st.just("v1")},
    optional={
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "ports": st.lists(ITEMS, max_size=3, unique_by=lambda item: item["name"]),
                "pairs": st.lists(ITEMS, max_size=3, unique_by=lambda item: (item["name"], item.get("port", 1))),
                "tags": st.lists(SCALARS, max_size=3, unique_by=json.dumps),
            },
        )
    },
)
KINDS = st.one_of(
    st.tuples(DEPLOYMENTS, DEPLOYMENTS, st.just(DEPLOYMENT)), st.tuples(CUSTOM_OBJECTS, CUSTOM_OBJECTS, st.just(CUSTOM))
)


def _roughened(value: Any, data: Any) -> Any:
    """``value`` with, now and then, a list item repeated or an item no key can be found for (a stored object
    the schema cannot quite place: merge keeps such items where they are)."""
    if isinstance(value, dict):
        return {key: _roughened(item, data) for key, item in value.items()}
    if not isinstance(value, list):
        return value
    items = [_roughened(item, data) for item in value]
    extra = data.draw(st.integers(0, 5))
    if extra == 0 and items:
        items.insert(data.draw(st.integers(0, len(items))), data.draw(st.sampled_from(items)))
    elif extra == 1:
        items.insert(data.draw(st.integers(0, len(items))), data.draw(st.sampled_from(["x", {}, {"image": "a"}])))
    return items


@settings(max_examples=600, deadline=None)
@given(KINDS, st.sampled_from(["independent", "over itself", "rough"]), st.data())
def test_the_single_walk_through_lists_is_the_general_walks(
    case: tuple[Any, Any, mf.Type], how: str, data: Any
) -> None:
    live, applied, t = case
    if how == "over itself":  # the configuration as applied over the object it made, a value changed or not
        live = reference.merge(live, applied, t)
    elif how == "rough":
        live = _roughened(live, data)
    fused = typed.merge_and_compare(live, applied, t)
    assert fused is not None  # these configurations fit their schema: the single walk answers
    merged, fields, comparison = fused
    general = reference.merge(live, applied, t)
    assert json.dumps(merged) == json.dumps(general) and (merged is live) == (general is live)
    assert json.dumps(fields) == json.dumps(reference.to_field_set(applied, t))  # in order: stored as written
    expected = reference.compare(live, general, t, skip_metadata=frozenset({"managedFields"}))
    # As sets (an apply uses them for conflicts and losses, whose answers do not depend on key order).
    assert (comparison.added, comparison.modified, comparison.removed) == (
        expected.added,
        expected.modified,
        expected.removed,
    )


CREATOR = mf.Manager("creator", mf.UPDATE, "v1", {}, "", "t1")
APPLIER = mf.Manager("applier", mf.APPLY, "v1", {}, "", "t2")
AGAIN = mf.Manager("applier", mf.APPLY, "v1", {}, "", "t3")


def _applied(live: Any, config: Any, t: mf.Type, managers: mf.Managers, force: bool) -> Any:
    try:
        merged, result = ownership.apply(live, config, t, managers, AGAIN, force=force)
    except (mf.SchemaError, mf.ApplyConflict) as error:
        return ("error", type(error).__name__, str(error))
    return ("ok", json.dumps(merged), json.dumps(mf.encode(result)))


@settings(max_examples=300, deadline=None)
@given(KINDS, st.data(), st.booleans())
def test_a_second_apply_through_lists_is_the_general_apply(
    case: tuple[Any, Any, mf.Type], data: Any, force: bool
) -> None:
    live, first, t = case
    second = data.draw(DEPLOYMENTS if t is DEPLOYMENT else CUSTOM_OBJECTS)
    managers = ownership.create(live, t, {}, CREATOR)
    live, managers = ownership.apply(live, first, t, managers, APPLIER, force=True)
    fast = _applied(live, second, t, managers, force)
    with mock.patch.object(ownership, "merge_and_compare", lambda *args: None):
        general = _applied(live, second, t, managers, force)
    assert fast == general


def test_live_items_the_schema_cannot_place_and_repeated_ones_stay_as_they_are() -> None:
    """A stored map list with an item that is not a map and a name given twice: merge keeps both where they are
    and merges the configuration into the first item of the name only, as the general merge does."""
    live = {"apiVersion": "v1", "spec": {"ports": ["x", {"name": "a", "b": "a"}, {"name": "a", "b": "c"}]}}
    applied = {"apiVersion": "v1", "spec": {"ports": [{"name": "a", "b": "b"}, {"name": "b"}]}}
    fused = typed.merge_and_compare(live, applied, CUSTOM)
    assert fused is not None
    merged, _, comparison = fused
    expected = ["x", {"name": "a", "b": "b"}, {"name": "a", "b": "c"}, {"name": "b"}]
    assert merged["spec"]["ports"] == expected == reference.merge(live, applied, CUSTOM)["spec"]["ports"]
    assert comparison.modified == {"f:spec": {"f:ports": {'k:{"name":"a"}': {"f:b": {}}}}}
