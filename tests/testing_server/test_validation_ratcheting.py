"""Validation ratcheting (CRDValidationRatcheting, on by default since Kubernetes 1.30): after a CRD's schema is
tightened, an update of an object stored before is accepted as long as it leaves the now-invalid parts as they were,
as on a cluster; changing such a part, or creating a new invalid object, is still a 422. Before, every update of
such an object (its status included) was refused here and accepted there."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from pyop.schema.errors import FieldError
from pyop.schema.ratcheting import ratchet
from pyop.testing import TestAPIServer
from testing_server.helpers import Api, official_client

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRD = f"{CRDS}/gadgets.ratchet.example.com"
GADGETS = "/apis/ratchet.example.com/v1/namespaces/default/gadgets"


def spec_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "size": {"type": "integer"},
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                },
            },
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }


def gadget_crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.ratchet.example.com"},
        "spec": {
            "group": "ratchet.example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": spec_schema(),
                                "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                            },
                        }
                    },
                }
            ],
        },
    }


def gadget(object_name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "ratchet.example.com/v1", "kind": "Gadget", "metadata": {"name": object_name}, "spec": spec}


async def tighten(api: Api, change: Any) -> None:
    """Apply ``change`` to the served version's spec schema and update the CRD."""
    status, crd = await api.get(CRD)
    assert status == 200
    crd = copy.deepcopy(crd)
    change(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"])
    status, answer = await api.put(CRD, crd)
    assert status == 200, answer


def fields(body: dict[str, Any]) -> list[str]:
    return [cause.get("field", "") for cause in body["details"]["causes"]]


async def update(api: Api, name: str, change: Any) -> tuple[int, Any]:
    status, current = await api.get(f"{GADGETS}/{name}")
    assert status == 200
    current = copy.deepcopy(current)
    change(current)
    return await api.put(f"{GADGETS}/{name}", current)


async def test_an_object_stored_before_a_tighter_schema_can_still_be_updated(api: Api) -> None:
    await api.create_ok(CRDS, gadget_crd())
    await api.create_ok(GADGETS, gadget("old", name="a-name-longer-than-five", size=1))
    await tighten(api, lambda spec: spec["properties"]["name"].update(maxLength=5))

    # Another field changes, the invalid one stays: accepted, as on a cluster.
    status, answer = await update(api, "old", lambda obj: obj["spec"].update(size=2))
    assert status == 200, answer
    # The status subresource leaves the spec as stored: accepted too.
    status, answer = await api.patch(
        f"{GADGETS}/old/status", {"status": {"phase": "Ready"}}, "application/merge-patch+json"
    )
    assert status == 200, answer
    # Changing the invalid field to another invalid value is refused; to a valid one, accepted.
    status, refused = await update(api, "old", lambda obj: obj["spec"].update(name="still-too-long"))
    assert status == 422 and fields(refused) == ["spec.name"]
    assert "Too long: may not be more than 5 bytes" in refused["details"]["causes"][0]["message"]
    status, answer = await update(api, "old", lambda obj: obj["spec"].update(name="short"))
    assert status == 200, answer
    # A new object gets the new rule in full.
    status, refused = await api.post(GADGETS, gadget("new", name="a-name-longer-than-five"))
    assert status == 422 and fields(refused) == ["spec.name"]


async def test_map_list_items_correlate_by_key_and_atomic_list_items_do_not(api: Api) -> None:
    await api.create_ok(CRDS, gadget_crd())
    ports = [{"name": "http", "port": 80}, {"name": "admin", "port": 70000}]
    await api.create_ok(GADGETS, gadget("ports", ports=ports))
    await api.create_ok(GADGETS, gadget("tags", tags=["a-long-tag", "b"], size=1))

    def tighter(spec: dict[str, Any]) -> None:
        spec["properties"]["ports"]["items"]["properties"]["port"].update(maximum=65535)
        spec["properties"]["tags"]["items"].update(maxLength=3)
        spec["properties"]["tags"].update(maxItems=1)

    await tighten(api, tighter)
    # The bad port's item is found by its key even when the list is reordered and grows.
    reordered = [{"name": "https", "port": 443}, {"name": "admin", "port": 70000}, {"name": "http", "port": 80}]
    status, answer = await update(api, "ports", lambda obj: obj["spec"].update(ports=reordered))
    assert status == 200, answer
    # A new item with the same bad value is not the old one.
    status, refused = await update(
        api, "ports", lambda obj: obj["spec"]["ports"].append({"name": "debug", "port": 70001})
    )
    assert status == 422 and fields(refused) == ["spec.ports[3].port"]
    # An atomic list's items have no identity to correlate by (kube-apiserver's CorrelatedObject): the error at the
    # item stands even though the list is unchanged, while the list's own maxItems error is ratcheted.
    status, refused = await update(api, "tags", lambda obj: obj["spec"].update(size=2))
    assert status == 422 and fields(refused) == ["spec.tags[0]"]


async def test_required_fields_and_transition_rules_are_not_ratcheted(api: Api) -> None:
    await api.create_ok(CRDS, gadget_crd())
    await api.create_ok(GADGETS, gadget("rules", name="abcdefgh", size=1))

    await tighten(api, lambda spec: spec.update(required=["name", "owner"]))
    status, refused = await update(api, "rules", lambda obj: obj["spec"].update(size=2))
    assert status == 422 and fields(refused) == ["spec.owner"]  # a missing required field is always reported

    def rules(spec: dict[str, Any]) -> None:
        spec.pop("required")
        spec["properties"]["name"]["x-kubernetes-validations"] = [
            {"rule": "self.size() <= 5", "message": "name too long"},
            {"rule": "oldSelf.size() <= 5", "message": "was too long"},
        ]

    await tighten(api, rules)
    status, refused = await update(api, "rules", lambda obj: obj["spec"].update(size=3))
    # The rule without oldSelf is ratcheted on the unchanged name; the transition rule never is.
    assert status == 422, refused
    assert [cause["message"] for cause in refused["details"]["causes"]] == ['Invalid value: "string": was too long']


async def test_the_official_client_updates_status_of_an_old_object(server: TestAPIServer, api: Api) -> None:
    await api.create_ok(CRDS, gadget_crd())
    await api.create_ok(GADGETS, gadget("legacy", name="a-name-longer-than-five"))
    await tighten(api, lambda spec: spec["properties"]["name"].update(maxLength=5))
    import kubernetes

    def patch_status() -> str:
        with official_client(server) as client:
            custom = kubernetes.client.CustomObjectsApi(client)
            answer = custom.patch_namespaced_custom_object_status(
                "ratchet.example.com", "v1", "default", "gadgets", "legacy", {"status": {"phase": "Ready"}}
            )
            return str(answer["status"]["phase"])

    assert await asyncio.to_thread(patch_status) == "Ready"


@pytest.mark.parametrize(
    ("error", "kept"),
    [
        (FieldError("Too long", "spec.name", "may not be more than 5 bytes"), False),
        (FieldError("Required value", "spec.owner"), True),
        (FieldError("Duplicate value", "spec.tags[1]", bad_value="a"), True),
        (FieldError("Invalid value", "spec.unknown", "x"), True),  # no schema to correlate with
    ],
)
def test_ratchet_keeps_what_kube_apiserver_keeps(error: FieldError, kept: bool) -> None:
    schema = {"type": "object", "properties": {"spec": spec_schema()}}
    new = {"spec": {"name": "abcdefgh", "tags": ["a", "a"], "unknown": 1}}
    old = copy.deepcopy(new)
    assert ratchet([error], new, old, schema) == ([error] if kept else [])
    assert ratchet([error], new, None, schema) == [error]  # a create is never ratcheted
