"""The defaulting patch is computed over the raw object: fields the model does not know survive at every level,
fields the defaulter cleared go, explicit nulls the model reads as unset are not changes."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
from webhook_helpers import Gadget, Port, gadget

from pyop.webhook.patch import defaulted_object, defaulting_patch


def patched(obj: Gadget, raw: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = jsonpatch.apply_patch(copy.deepcopy(raw), defaulting_patch(obj, raw))
    return result


def test_unknown_fields_survive_in_nested_models_and_list_items() -> None:
    raw = gadget(ports=[{"name": "a", "hostIP": "0.0.0.0"}], future={"x": 1})
    raw["metadata"]["managedFields"] = [{"manager": "kubectl"}]  # ObjectMeta keeps what it does not declare
    raw["unknownTop"] = True
    obj = Gadget.model_validate(raw)
    obj.spec.ports = [*(obj.spec.ports or []), Port(name="b", container_port=2)]
    assert obj.spec.ports is not None
    obj.spec.ports[0].container_port = 1
    result = patched(obj, raw)
    assert result == defaulted_object(obj, raw)
    assert result["spec"]["ports"] == [
        {"name": "a", "hostIP": "0.0.0.0", "containerPort": 1},
        {"name": "b", "containerPort": 2},
    ]
    assert result["spec"]["future"] == {"x": 1} and result["unknownTop"] is True
    assert result["metadata"]["managedFields"] == [{"manager": "kubectl"}]


def test_a_field_the_defaulter_cleared_is_removed_and_an_untouched_object_gives_no_patch() -> None:
    raw = gadget(size=3, image="a:1")
    raw["spec"]["unknown"] = "kept"
    raw["status"] = None  # an explicit null the model reads as absent
    obj = Gadget.model_validate(raw)
    assert defaulting_patch(obj, raw) == []
    obj.spec.image = None
    obj.metadata.labels = {"l": "v"}
    assert sorted((op["op"], op["path"]) for op in defaulting_patch(obj, raw)) == [
        ("add", "/metadata/labels"),
        ("remove", "/spec/image"),
    ]
    assert patched(obj, raw)["spec"] == {"size": 3, "unknown": "kept"}
