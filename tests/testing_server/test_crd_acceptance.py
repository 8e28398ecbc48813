"""A CRD kube-apiserver refuses is refused here (issue 12 item 9), by the offline check `make manifests` runs."""

from __future__ import annotations

from typing import Any

from testing_server.helpers import Api

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def crd(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "ships.fleet.example.com"},
        "spec": {
            "group": "fleet.example.com",
            "scope": "Namespaced",
            "names": {"plural": "ships", "singular": "ship", "kind": "Ship", "listKind": "ShipList"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


async def test_a_schema_that_is_not_structural_is_422(api: Api) -> None:
    code, status = await api.post(CRDS, crd({"type": "object", "properties": {"spec": {"properties": {}}}}))
    assert code == 422 and status["reason"] == "Invalid"
    assert {
        "reason": "FieldValueRequired",
        "message": "Required value: must not be empty for specified object fields",
        "field": "spec.validation.openAPIV3Schema.properties[spec].type",
    } in status["details"]["causes"]


async def test_a_cel_rule_that_does_not_compile_is_422(api: Api) -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"crew": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.crew >"}],
            }
        },
    }
    code, status = await api.post(CRDS, crd(schema))
    assert code == 422
    fields = [cause["field"] for cause in status["details"]["causes"]]
    assert "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule" in fields
    assert "compilation failed" in status["message"]


async def test_a_valid_crd_is_accepted(api: Api) -> None:
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    code, _ = await api.post(CRDS, crd(schema))
    assert code == 201
