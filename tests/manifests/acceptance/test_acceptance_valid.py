"""Valid CRDs produce no error, and the same fixtures pass kubernetes-validate's strict schema."""

from __future__ import annotations

import copy
from typing import Any

import kubernetes_validate
import pytest
from acceptance_fixtures import base_crd, rich_crd

from pyop_scaffold.manifests.acceptance import PathStyle, check_crd, format_errors


def _tiny_crd() -> dict[str, Any]:
    crd = base_crd()
    version = crd["spec"]["versions"][0]
    for optional in ("subresources", "additionalPrinterColumns"):
        version.pop(optional)
    version["schema"]["openAPIV3Schema"] = {
        "type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    crd["spec"]["names"] = {"plural": "foos", "kind": "Foo"}  # singular/listKind defaulted by the server
    return crd


VALID = {"base": base_crd, "rich-two-versions": rich_crd, "minimal": _tiny_crd}


@pytest.mark.parametrize("factory", VALID.values(), ids=list(VALID))
def test_valid_crd_has_no_errors(factory: Any) -> None:
    errors = check_crd(factory())
    assert errors == [], "\n".join(map(str, errors))


@pytest.mark.parametrize("factory", VALID.values(), ids=list(VALID))
def test_valid_fixture_passes_kubernetes_validate_strict(factory: Any) -> None:
    kubernetes_validate.validate(factory(), "1.32", strict=True)  # raises on failure


def test_kubernetes_validate_only_checks_shape_so_semantic_errors_need_check_crd() -> None:
    crd = base_crd()
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["image"]["type"] = (
        "strign"
    )
    kubernetes_validate.validate(crd, "1.32", strict=True)
    assert [(e.type, e.field) for e in check_crd(crd)] == [
        ("Unsupported value", "spec.validation.openAPIV3Schema.properties[spec].properties[image].type")
    ]


def test_differing_schemas_report_errors_under_their_version() -> None:
    crd = rich_crd()
    v2 = crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]
    v2["properties"]["spec"]["properties"]["priority"]["type"] = "text"
    assert [(e.type, e.field) for e in check_crd(crd)] == [
        ("Unsupported value", "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[priority].type")
    ]


def test_hoisted_columns_are_reported_once() -> None:
    crd = rich_crd()
    for version in crd["spec"]["versions"]:
        version["additionalPrinterColumns"][0]["type"] = "float"
    assert [(e.type, e.field) for e in check_crd(crd)] == [("Invalid value", "spec.additionalPrinterColumns[0].type")]


def test_v1_path_style_names_places_in_the_document() -> None:
    crd = base_crd()
    crd["spec"]["versions"][0]["additionalPrinterColumns"][0]["jsonPath"] = "spec.replicas"
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["image"]["type"] = (
        "text"
    )
    fields = sorted(e.field for e in check_crd(crd, path_style=PathStyle.V1))
    assert fields == [
        "spec.versions[0].additionalPrinterColumns[0].jsonPath",
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[image].type",
    ]


def test_errors_render_like_the_api_server() -> None:
    crd = base_crd()
    crd["spec"]["scope"] = "Global"
    errors = check_crd(crd)
    assert format_errors("foos.example.com", errors) == (
        'The CustomResourceDefinition "foos.example.com" is invalid: '
        'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'
    )
    crd["spec"]["names"]["plural"] = "Foos"
    crd["metadata"]["name"] = "Foos.example.com"
    lines = format_errors("Foos.example.com", check_crd(crd)).splitlines()
    assert lines[0] == 'The CustomResourceDefinition "Foos.example.com" is invalid: '
    assert lines[1].startswith('* metadata.name: Invalid value: "Foos.example.com": a lowercase RFC 1123 subdomain')
    assert (
        '* spec.names.plural: Invalid value: "Foos": a DNS-1035 label must consist of lower case alphanumeric '
        "characters or '-', start with an alphabetic character, and end with an alphanumeric character "
        "(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ) in lines


def test_default_error_message_names_the_default_path() -> None:
    crd = base_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["replicas"]["default"] = "one"
    path = "spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default"
    assert [str(e) for e in check_crd(crd)] == [
        f'{path}: Invalid value: "string": {path} in body must be of type integer: "string"'
    ]


def test_client_side_apply_size_limit_is_opt_in() -> None:
    crd = base_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["image"]["description"] = "x" * 300_000
    assert check_crd(crd) == []
    assert [str(e) for e in check_crd(crd, client_side_apply=True)] == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]


def test_optional_cel_syntax_is_accepted() -> None:
    crd = copy.deepcopy(base_crd())
    rules = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"]
    rules.append({"rule": "self.?image.orValue('') != 'latest'"})
    rules.append({"rule": "self.image.matches('^[a-z]') ? size(self.image) < 64 : true"})
    assert check_crd(crd) == []


KUBERNETES_STYLE_RULES = [
    "self.minReplicas <= self.replicas",
    "has(self.image)",
    "self.tags.all(t, t.size() > 0)",
    "oldSelf == self",
    "self.tags.size() <= 10",
    "self.image.matches('^a')",
    "self.tags.exists(t, t.startsWith('x')) || self.tags.exists_one(t, t.endsWith('y'))",
    "self.tags.map(t, t.size()).filter(n, n > 3).size() == 0",
    "self.replicas > 3 ? self.image.contains('big') : true",
    "self.labels.all(k, self.labels[k].size() < 64)",
    "!has(self.image) || self.image != 'latest'",
    "self.replicas in [1, 2, 3]",
]


@pytest.mark.parametrize("rule", KUBERNETES_STYLE_RULES)
def test_kubernetes_style_rules_compile(rule: str) -> None:
    crd = base_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["tags"] = {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 32}}
    spec["properties"]["labels"] = {"type": "object", "additionalProperties": {"type": "string"}}
    spec["x-kubernetes-validations"] = [{"rule": rule}]
    assert check_crd(crd) == []


@pytest.mark.parametrize(
    "rule", ["has(self)", "self.tags.all(t)", "self.replicas >", "self.tags.all(t, u > 0)", "self.metadata.name == 'x'"]
)
def test_rules_cel_go_would_reject_are_reported(rule: str) -> None:
    crd = base_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["tags"] = {"type": "array", "items": {"type": "string"}}
    spec["x-kubernetes-validations"] = [{"rule": rule}]
    errors = check_crd(crd)
    assert [(e.type, e.field) for e in errors] == [
        ("Invalid value", "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule")
    ], rule
    assert "compilation failed: ERROR: <input>" in errors[0].detail
