"""Predicates and event handlers as pure functions of the cached objects."""

from __future__ import annotations

from typing import Any

import pytest

from pyop.controller import (
    AnnotationsChanged,
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    GenerationChanged,
    LabelsChanged,
    Predicate,
    PredicateFuncs,
    Request,
    ResourceVersionChanged,
    all_of,
    any_of,
    object_predicate,
)
from pyop.controller.source import informer_handler
from pyop.informers import DeletedFinalStateUnknown


def obj(name: str = "w", namespace: str | None = "default", **metadata: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **metadata}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "ctrl.pyop.dev/v1", "kind": "Widget", "metadata": meta}


def owned_by(*references: dict[str, Any], namespace: str = "default") -> dict[str, Any]:
    return {"metadata": {"name": "cm", "namespace": namespace, "ownerReferences": list(references)}}


def ref(
    kind: str = "Widget", name: str = "owner", api_version: str = "ctrl.pyop.dev/v1", **flags: Any
) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"uid-{name}", **flags}


@pytest.mark.parametrize(
    ("predicate", "old", "new", "passes"),
    [
        (GenerationChanged(), obj(generation=1), obj(generation=1, labels={"a": "b"}), False),
        (GenerationChanged(), obj(generation=1), obj(generation=2), True),
        (LabelsChanged(), obj(labels={"a": "b"}), obj(labels={"a": "b"}, generation=5), False),
        (LabelsChanged(), obj(), obj(labels={"a": "b"}), True),
        (LabelsChanged(), obj(labels={}), obj(), False),  # empty and missing are the same
        (AnnotationsChanged(), obj(annotations={"n": "1"}), obj(annotations={"n": "2"}), True),
        (AnnotationsChanged(), obj(annotations={"n": "1"}), obj(annotations={"n": "1"}, labels={"x": "y"}), False),
        (ResourceVersionChanged(), obj(resourceVersion="7"), obj(resourceVersion="7"), False),
        (ResourceVersionChanged(), obj(resourceVersion="7"), obj(resourceVersion="8"), True),
    ],
)
def test_change_predicates_filter_updates_only(
    predicate: Predicate, old: dict[str, Any], new: dict[str, Any], passes: bool
) -> None:  # noqa: E501
    assert predicate.update(old, new) is passes
    # Creations, deletions and generic events are never filtered by change predicates.
    assert predicate.create(new) and predicate.delete(new) and predicate.generic(new)


def test_combinators() -> None:
    gen, labels = GenerationChanged(), LabelsChanged()
    only_labels = (obj(generation=1), obj(generation=1, labels={"a": "b"}))
    nothing = (obj(generation=1), obj(generation=1))
    assert (gen | labels).update(*only_labels) and not (gen & labels).update(*only_labels)
    assert (~gen).update(*nothing) and not (~gen).create(obj())
    assert all_of(gen, labels).update(*nothing) is False and any_of(gen, labels).update(*only_labels) is True
    assert all_of().update(*nothing) is True and any_of().update(*nothing) is False


def test_custom_predicates() -> None:
    in_team = object_predicate(lambda o: o["metadata"].get("labels", {}).get("team") == "a")
    ours, theirs = obj(labels={"team": "a"}), obj(labels={"team": "b"})
    assert in_team.create(ours) and not in_team.create(theirs)
    assert in_team.update(theirs, ours) and not in_team.update(ours, theirs)  # judged on the new state
    assert in_team.delete(ours) and not in_team.generic(theirs)
    no_deletes = PredicateFuncs(delete=lambda o: False)
    assert no_deletes.create(ours) and no_deletes.update(ours, ours) and not no_deletes.delete(ours)


def collect(handler: Any, event: str, *objects: dict[str, Any]) -> list[Request]:
    added: list[Request] = []
    getattr(handler, event)(*objects, added.append)
    return added


def test_enqueue_for_object() -> None:
    handler = EnqueueRequestForObject()
    assert collect(handler, "create", obj("a")) == [Request("default", "a")]
    assert collect(handler, "update", obj("a"), obj("a")) == [Request("default", "a")]
    assert collect(handler, "delete", obj("c", namespace=None)) == [Request(None, "c")]
    assert str(Request("ns", "n")) == "ns/n" and str(Request(None, "n")) == "n"


def test_enqueue_for_owner_matches_group_and_kind_not_version() -> None:
    handler = EnqueueRequestForOwner("ctrl.pyop.dev", "Widget", owner_namespaced=True)
    assert collect(handler, "create", owned_by(ref(controller=True))) == [Request("default", "owner")]
    assert collect(handler, "create", owned_by(ref(api_version="ctrl.pyop.dev/v2", controller=True))) == [
        Request("default", "owner")
    ]
    assert collect(handler, "create", owned_by(ref(controller=False))) == []  # not the controller
    assert collect(handler, "create", owned_by(ref(kind="Gadget", controller=True))) == []
    assert collect(handler, "create", owned_by(ref(api_version="other.dev/v1", controller=True))) == []
    assert collect(handler, "create", {"metadata": {"name": "orphan", "namespace": "x"}}) == []
    any_owner = EnqueueRequestForOwner("ctrl.pyop.dev", "Widget", owner_namespaced=True, only_controller=False)
    assert collect(any_owner, "create", owned_by(ref(name="a"), ref(name="b", controller=True))) == [
        Request("default", "a"),
        Request("default", "b"),
    ]
    cluster_owner = EnqueueRequestForOwner("ctrl.pyop.dev", "Widget", owner_namespaced=False)
    assert collect(cluster_owner, "delete", owned_by(ref(controller=True))) == [Request(None, "owner")]


def test_enqueue_for_owner_update_wakes_old_and_new_owner_once_each() -> None:
    handler = EnqueueRequestForOwner("ctrl.pyop.dev", "Widget", owner_namespaced=True)
    old = owned_by(ref(name="first", controller=True))
    new = owned_by(ref(name="second", controller=True))
    assert sorted(collect(handler, "update", old, new)) == [Request("default", "first"), Request("default", "second")]
    assert collect(handler, "update", old, old) == [Request("default", "first")]


def test_map_func_handler() -> None:
    handler = EnqueueRequestsFromMapFunc(lambda o: [Request("default", n) for n in o["metadata"]["name"].split("+")])
    assert collect(handler, "create", obj("a+b")) == [Request("default", "a"), Request("default", "b")]
    assert sorted(collect(handler, "update", obj("a"), obj("b"))) == [Request("default", "a"), Request("default", "b")]
    assert collect(handler, "generic", obj("c")) == [Request("default", "c")]


def test_source_runs_predicates_before_the_handler_and_unwraps_tombstones() -> None:
    added: list[Request] = []
    source = informer_handler(
        EnqueueRequestForObject(), [GenerationChanged(), PredicateFuncs(delete=lambda o: True)], added.append
    )
    source.on_update(obj("a", generation=1), obj("a", generation=1))
    assert added == []
    source.on_update(obj("a", generation=1), obj("a", generation=2))
    source.on_add(obj("b"))
    source.on_delete(DeletedFinalStateUnknown("default/c", obj("c")))
    assert added == [Request("default", "a"), Request("default", "b"), Request("default", "c")]
