"""Invalid CRDs: each case mutates the valid base CRD and names the exact errors (type, path)
the API server reports, per docs/reference/crd-rules.md."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from acceptance_fixtures import base_crd

from pyop_scaffold.manifests.acceptance import check_crd

S = "spec.validation.openAPIV3Schema"  # single version: the schema is hoisted (crd-rules §0)
SPEC = f"{S}.properties[spec]"
V0 = "spec.versions[0]"
REQ, INV, FORB, UNSUP, DUP, MANY = (
    "Required value",
    "Invalid value",
    "Forbidden",
    "Unsupported value",
    "Duplicate value",
    "Too many",
)


def schema(crd: dict[str, Any]) -> dict[str, Any]:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def spec_props(crd: dict[str, Any]) -> dict[str, Any]:
    return schema(crd)["properties"]["spec"]["properties"]


def version(crd: dict[str, Any]) -> dict[str, Any]:
    return crd["spec"]["versions"][0]


def set_path(obj: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split("/")
    for part in parents:
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    obj[last] = value


def mutate(*changes: tuple[str, Any]) -> Callable[[dict[str, Any]], None]:
    """Each change sets a value at a '/'-separated path ('spec/names/kind')."""

    def apply(crd: dict[str, Any]) -> None:
        for dotted, value in changes:
            set_path(crd, dotted, value)

    return apply


def on_spec_props(fn: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda crd: fn(spec_props(crd))


def on_schema(fn: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda crd: fn(schema(crd))


def on_version(fn: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda crd: fn(version(crd))


def delete(container: dict[str, Any], name: str) -> None:
    del container[name]


Case = tuple[str, Callable[[dict[str, Any]], None], list[tuple[str, str]]]

CASES: list[Case] = [
    # --- object level ----------------------------------------------------------------------
    ("name-not-plural-dot-group", mutate(("metadata/name", "bars.example.com")), [(INV, "metadata.name")]),
    ("name-missing", lambda c: c["metadata"].pop("name"), [(REQ, "metadata.name")]),
    ("group-without-dot", mutate(("spec/group", "example"), ("metadata/name", "foos.example")), [(INV, "spec.group")]),
    (
        "group-not-dns",
        mutate(("spec/group", "Example.com"), ("metadata/name", "foos.Example.com")),
        [(INV, "metadata.name"), (INV, "spec.group")],
    ),
    (
        "group-missing",
        mutate(("spec/group", ""), ("metadata/name", "foos.")),
        [(INV, "metadata.name"), (REQ, "spec.group")],
    ),
    ("scope-unsupported", mutate(("spec/scope", "Global")), [(UNSUP, "spec.scope")]),
    (
        "plural-uppercase",
        mutate(("spec/names/plural", "Foos"), ("metadata/name", "Foos.example.com")),
        [(INV, "metadata.name"), (INV, "spec.names.plural")],
    ),
    ("singular-with-dot", mutate(("spec/names/singular", "foo.bar")), [(INV, "spec.names.singular")]),
    ("kind-with-underscore", mutate(("spec/names/kind", "Foo_Bar")), [(INV, "spec.names.kind")]),
    (
        "kind-missing",
        mutate(("spec/names/kind", ""), ("spec/names/listKind", "")),
        [(REQ, "spec.names.kind"), (REQ, "spec.names.listKind")],
    ),
    ("listkind-equals-kind", mutate(("spec/names/listKind", "Foo")), [(INV, "spec.names.listKind")]),
    ("shortname-invalid", mutate(("spec/names/shortNames", ["ok", "Not_OK"])), [(INV, "spec.names.shortNames[1]")]),
    ("category-invalid", mutate(("spec/names/categories", ["all", "1st"])), [(INV, "spec.names.categories[1]")]),
    ("version-name-not-dns1035", mutate(("spec/versions/0/name", "v1.0")), [(INV, f"{V0}.name")]),
    ("no-storage-version", mutate(("spec/versions/0/storage", False)), [(INV, "spec.versions")]),
    (
        "two-storage-duplicate-names",
        lambda c: c["spec"]["versions"].append(base_crd()["spec"]["versions"][0]),
        [(INV, "spec.versions"), (INV, "spec.versions")],
    ),
    ("schema-missing", on_version(lambda v: v.pop("schema")), [(REQ, f"{V0}.schema.openAPIV3Schema")]),
    (
        "preserve-unknown-fields-true",
        mutate(("spec/preserveUnknownFields", True)),
        [(INV, "spec.preserveUnknownFields"), (INV, "spec.preserveUnknownFields")],
    ),
    (
        "deprecation-warning-not-deprecated",
        mutate(("spec/versions/0/deprecationWarning", "old")),
        [(INV, f"{V0}.deprecationWarning")],
    ),
    (
        "deprecation-warning-too-long",
        mutate(("spec/versions/0/deprecated", True), ("spec/versions/0/deprecationWarning", "x" * 257)),
        [(INV, f"{V0}.deprecationWarning")],
    ),
    (
        "deprecation-warning-control-char",
        mutate(("spec/versions/0/deprecated", True), ("spec/versions/0/deprecationWarning", "a\tb")),
        [(INV, f"{V0}.deprecationWarning")],
    ),
    (
        "column-type-invalid",
        mutate(("spec/versions/0/additionalPrinterColumns/0/type", "int")),
        [(INV, "spec.additionalPrinterColumns[0].type")],
    ),
    (
        "column-format-invalid",
        mutate(("spec/versions/0/additionalPrinterColumns/0/format", "uuid")),
        [(INV, "spec.additionalPrinterColumns[0].format")],
    ),
    (
        "column-jsonpath-no-dot",
        mutate(("spec/versions/0/additionalPrinterColumns/1/jsonPath", "metadata.name")),
        [(INV, "spec.additionalPrinterColumns[1].JSONPath")],
    ),
    (
        "column-name-and-type-missing",
        mutate(
            ("spec/versions/0/additionalPrinterColumns/0/name", ""),
            ("spec/versions/0/additionalPrinterColumns/0/type", ""),
        ),
        [(REQ, "spec.additionalPrinterColumns[0].name"), (REQ, "spec.additionalPrinterColumns[0].type")],
    ),
    (
        "scale-spec-path-outside-spec",
        mutate(("spec/versions/0/subresources/scale/specReplicasPath", ".status.x")),
        [(INV, "spec.subresources.scale.specReplicasPath")],
    ),
    (
        "scale-status-path-missing",
        mutate(("spec/versions/0/subresources/scale/statusReplicasPath", "")),
        [(REQ, "spec.subresources.scale.statusReplicasPath")],
    ),
    (
        "scale-selector-path-elsewhere",
        mutate(("spec/versions/0/subresources/scale/labelSelectorPath", ".metadata.x")),
        [(INV, "spec.subresources.scale.labelSelectorPath")],
    ),
    (
        "selectable-field-unknown",
        mutate(("spec/versions/0/selectableFields", [{"jsonPath": ".spec.nope"}])),
        [(INV, "spec.selectableFields[0].jsonPath")],
    ),
    (
        "selectable-field-object-and-dup",
        mutate(
            (
                "spec/versions/0/selectableFields",
                [{"jsonPath": ".spec"}, {"jsonPath": ".spec.image"}, {"jsonPath": ".spec.image"}],
            )
        ),
        [(INV, "spec.selectableFields[0].jsonPath"), (DUP, "spec.selectableFields[2].jsonPath")],
    ),
    (
        "selectable-fields-too-many",
        lambda c: (
            spec_props(c).update({f"f{i}": {"type": "string"} for i in range(9)}),
            version(c).update(selectableFields=[{"jsonPath": f".spec.f{i}"} for i in range(9)]),
        ),
        [(MANY, "spec.selectableFields")],
    ),
    (
        "selectable-field-in-metadata",
        lambda c: (
            schema(c)["properties"].update(metadata={"type": "object", "properties": {"name": {"type": "string"}}}),
            version(c).update(selectableFields=[{"jsonPath": ".metadata.name"}]),
        ),
        [(INV, "spec.selectableFields[0].jsonPath")],
    ),
    (
        "conversion-webhook-without-config",
        mutate(("spec/conversion", {"strategy": "Webhook"})),
        [(REQ, "spec.conversion.webhookClientConfig"), (REQ, "spec.conversion.conversionReviewVersions")],
    ),
    (
        "conversion-webhook-http-url",
        mutate(
            (
                "spec/conversion",
                {
                    "strategy": "Webhook",
                    "webhook": {
                        "conversionReviewVersions": ["v1"],
                        "clientConfig": {"url": "http://example.com/convert?x=1"},
                    },
                },
            )
        ),
        [(INV, "spec.conversion.webhookClientConfig.url"), (INV, "spec.conversion.webhookClientConfig.url")],
    ),
    (
        "conversion-webhook-bad-service-and-versions",
        mutate(
            (
                "spec/conversion",
                {
                    "strategy": "Webhook",
                    "webhook": {
                        "conversionReviewVersions": ["v2", "v2"],
                        "clientConfig": {"service": {"name": "svc", "namespace": "ns", "port": 0, "path": "convert"}},
                    },
                },
            )
        ),
        [
            (INV, "spec.conversion.webhookClientConfig.service.port"),
            (INV, "spec.conversion.webhookClientConfig.service.path"),
            (INV, "spec.conversion.conversionReviewVersions[1]"),
            (INV, "spec.conversion.conversionReviewVersions"),
        ],
    ),
    (
        "conversion-none-with-config",
        mutate(("spec/conversion", {"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"]}})),
        [(FORB, "spec.conversion.conversionReviewVersions")],
    ),
    (
        "conversion-strategy-unsupported",
        mutate(("spec/conversion", {"strategy": "Magic"})),
        [(UNSUP, "spec.conversion.strategy")],
    ),
    (
        "protected-group-no-approval",
        mutate(("spec/group", "things.k8s.io"), ("metadata/name", "foos.things.k8s.io")),
        [(REQ, "metadata.annotations[api-approved.kubernetes.io]")],
    ),
    # --- per-node OpenAPI rules ------------------------------------------------------------------
    (
        "type-unsupported",
        on_spec_props(lambda p: p["image"].update(type="text")),
        [(UNSUP, f"{SPEC}.properties[image].type")],
    ),
    (
        "type-null",
        on_spec_props(lambda p: p["image"].update(type="null")),
        [(UNSUP, f"{SPEC}.properties[image].type"), (FORB, f"{SPEC}.properties[image].type")],
    ),
    (
        "ref",
        on_spec_props(lambda p: p.update(other={"$ref": "#/definitions/x"})),
        # NewStructural fails on $ref, so the structural checks (missing type) never run.
        [(FORB, f"{SPEC}.properties[other].$ref")],
    ),
    (
        "unique-items",
        on_spec_props(lambda p: p.update(tags={"type": "array", "uniqueItems": True, "items": {"type": "string"}})),
        [(FORB, f"{SPEC}.properties[tags].uniqueItems")],
    ),
    (
        "items-array",
        on_spec_props(lambda p: p.update(pair={"type": "array", "items": [{"type": "string"}]})),
        [(FORB, f"{SPEC}.properties[pair].items")],
    ),
    (
        "properties-and-additional-properties",
        on_spec_props(
            lambda p: p.update(
                m={
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "additionalProperties": {"type": "string"},
                }
            )
        ),
        [(FORB, f"{SPEC}.properties[m].additionalProperties")],
    ),
    (
        "preserve-unknown-false",
        on_spec_props(lambda p: p["image"].update({"x-kubernetes-preserve-unknown-fields": False})),
        [(INV, f"{SPEC}.properties[image].x-kubernetes-preserve-unknown-fields")],
    ),
    (
        "default-in-metadata",
        on_schema(lambda s: s["properties"]["metadata"].update(default={"name": "x"})),
        [(FORB, f"{S}.properties[metadata].default")],
    ),
    (
        "bad-pattern",
        on_spec_props(lambda p: p["image"].update(pattern="^(?!latest)")),
        [(INV, f"{SPEC}.properties[image].pattern")],
    ),
    (
        "list-type-on-object",
        on_spec_props(lambda p: p["image"].update({"x-kubernetes-list-type": "set"})),
        [(INV, f"{SPEC}.properties[image].type")],
    ),
    (
        "list-type-unsupported",
        on_spec_props(
            lambda p: p.update(tags={"type": "array", "x-kubernetes-list-type": "bag", "items": {"type": "string"}})
        ),
        [(UNSUP, f"{SPEC}.properties[tags].x-kubernetes-list-type")],
    ),
    (
        "map-type-unsupported",
        on_spec_props(lambda p: p.update(sel={"type": "object", "x-kubernetes-map-type": "frozen"})),
        [(UNSUP, f"{SPEC}.properties[sel].x-kubernetes-map-type")],
    ),
    (
        "list-map-keys-without-map",
        on_spec_props(
            lambda p: p.update(
                items={
                    "type": "array",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
                }
            )
        ),
        [(REQ, f"{SPEC}.properties[items].x-kubernetes-list-type")],
    ),
    (
        "list-map-key-not-a-property",
        on_spec_props(
            lambda p: p.update(
                items={
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["id"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                }
            )
        ),
        [(INV, f"{SPEC}.properties[items].x-kubernetes-list-map-keys")],
    ),
    (
        "list-map-key-optional-without-default",
        on_spec_props(
            lambda p: p.update(
                items={
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                }
            )
        ),
        [(REQ, f"{SPEC}.properties[items].items.properties[name].default")],
    ),
    (
        "list-set-of-granular-objects",
        on_spec_props(
            lambda p: p.update(
                items={
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                }
            )
        ),
        [(INV, f"{SPEC}.properties[items].items.x-kubernetes-map-type")],
    ),
    ("root-nullable", on_schema(lambda s: s.update(nullable=True)), [(FORB, f"{S}.nullable"), (INV, S)]),
    ("root-extra-field-with-status", on_schema(lambda s: s.update(enum=[{}])), [(INV, S)]),
    # --- structural rules ------------------------------------------------------------------------
    ("missing-type", on_spec_props(lambda p: p.update(free={})), [(REQ, f"{SPEC}.properties[free].type")]),
    (
        "array-without-items",
        on_spec_props(lambda p: p.update(list={"type": "array"})),
        [(REQ, f"{SPEC}.properties[list].items")],
    ),
    (
        "array-items-without-type",
        on_spec_props(lambda p: p.update(list={"type": "array", "items": {}})),
        [(REQ, f"{SPEC}.properties[list].items.type")],
    ),
    (
        "root-additional-properties",
        on_schema(lambda s: s.update(additionalProperties=False)),
        [(FORB, f"{S}.additionalProperties"), (INV, S), (FORB, f"{S}.additionalProperties")],
    ),
    (
        "metadata-with-labels",
        on_schema(
            lambda s: s["properties"]["metadata"].update(
                properties={"labels": {"type": "object", "additionalProperties": {"type": "string"}}}
            )
        ),
        [(FORB, f"{S}.properties[metadata]")],
    ),
    (
        "kind-not-string",
        on_schema(lambda s: s["properties"]["kind"].update(type="integer")),
        [(INV, f"{S}.properties[kind].type")],
    ),
    (
        "type-inside-anyof",
        on_spec_props(lambda p: p["image"].update(anyOf=[{"type": "string", "minLength": 1}])),
        [(FORB, f"{SPEC}.properties[image].anyOf[0].type")],
    ),
    (
        "default-inside-oneof",
        on_spec_props(lambda p: p["replicas"].update(oneOf=[{"default": 2}])),
        [(FORB, f"{SPEC}.properties[replicas].oneOf[0].default")],
    ),
    (
        "junctor-mentions-undeclared-property",
        lambda c: schema(c)["properties"]["spec"].update(allOf=[{"properties": {"ghost": {"minLength": 1}}}]),
        [(REQ, f"{SPEC}.properties[ghost]")],
    ),
    (
        "embedded-resource-not-object",
        on_spec_props(lambda p: p.update(tpl={"type": "string", "x-kubernetes-embedded-resource": True})),
        [(INV, f"{SPEC}.properties[tpl].type"), (REQ, f"{SPEC}.properties[tpl].properties")],
    ),
    (
        "embedded-resource-without-properties",
        on_spec_props(lambda p: p.update(tpl={"type": "object", "x-kubernetes-embedded-resource": True})),
        [(REQ, f"{SPEC}.properties[tpl].properties")],
    ),
    (
        "int-or-string-with-preserve",
        on_spec_props(
            lambda p: p.update(port={"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True})
        ),
        [(INV, f"{SPEC}.properties[port].x-kubernetes-preserve-unknown-fields")],
    ),
    # --- defaults --------------------------------------------------------------------------------
    (
        "default-wrong-type",
        on_spec_props(lambda p: p["replicas"].update(default="one")),
        [(INV, f"{SPEC}.properties[replicas].default")],
    ),
    (
        "default-violates-minimum",
        on_spec_props(lambda p: p["replicas"].update(default=-1)),
        [(INV, f"{SPEC}.properties[replicas].default")],
    ),
    (
        "default-with-unknown-field",
        lambda c: schema(c)["properties"]["spec"].update(default={"bogus": 1}),
        [(INV, f"{SPEC}.default")],
    ),
    (
        "default-violates-cel-rule",
        lambda c: schema(c)["properties"]["spec"].update(default={"replicas": 1, "minReplicas": 5}),
        [(INV, f"{SPEC}.default")],
    ),
    # --- CEL rules -------------------------------------------------------------------------------
    (
        "cel-empty-rule",
        lambda c: schema(c)["properties"]["spec"]["x-kubernetes-validations"].append({"rule": " "}),
        [(REQ, f"{SPEC}.x-kubernetes-validations[1].rule")],
    ),
    (
        "cel-message-line-break",
        lambda c: schema(c)["properties"]["spec"]["x-kubernetes-validations"].append(
            {"rule": "true", "message": "two\nlines"}
        ),
        [(INV, f"{SPEC}.x-kubernetes-validations[1].message")],
    ),
    (
        "cel-multiline-rule-without-message",
        lambda c: schema(c)["properties"]["spec"]["x-kubernetes-validations"].append(
            {"rule": "self.replicas >= 0 &&\nself.replicas < 100"}
        ),
        [(REQ, f"{SPEC}.x-kubernetes-validations[1].message")],
    ),
    (
        "cel-reason-unsupported",
        lambda c: schema(c)["properties"]["spec"]["x-kubernetes-validations"].append(
            {"rule": "true", "reason": "FieldValueBad"}
        ),
        [(UNSUP, f"{SPEC}.x-kubernetes-validations[1].reason")],
    ),
    (
        "cel-field-path-unknown",
        lambda c: schema(c)["properties"]["spec"]["x-kubernetes-validations"].append(
            {"rule": "true", "fieldPath": ".nope"}
        ),
        [(INV, f"{SPEC}.x-kubernetes-validations[1].fieldPath")],
    ),
    (
        "cel-syntax-error",
        lambda c: schema(c)["properties"]["spec"]["x-kubernetes-validations"].append({"rule": "self.replicas >"}),
        [(INV, f"{SPEC}.x-kubernetes-validations[1].rule")],
    ),
    (
        "cel-undeclared-variable",
        lambda c: schema(c)["properties"]["spec"]["x-kubernetes-validations"].append({"rule": "slef.replicas > 0"}),
        [(INV, f"{SPEC}.x-kubernetes-validations[1].rule")],
    ),
    (
        "cel-undefined-field",
        lambda c: schema(c)["properties"]["spec"]["x-kubernetes-validations"].append({"rule": "self.replica > 0"}),
        [(INV, f"{SPEC}.x-kubernetes-validations[1].rule")],
    ),
    (
        "cel-oldself-under-atomic-list",
        on_spec_props(
            lambda p: p.update(
                tags={
                    "type": "array",
                    "maxItems": 10,  # bounded, so that only the oldSelf placement is wrong (not the cost)
                    "items": {
                        "type": "string",
                        "maxLength": 63,
                        "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
                    },
                }
            )
        ),
        [(INV, f"{SPEC}.properties[tags].items.x-kubernetes-validations[0].rule")],
    ),
    (
        "cel-optional-old-self-without-old-self",
        lambda c: schema(c)["properties"]["spec"]["x-kubernetes-validations"].append(
            {"rule": "self.replicas > 0", "optionalOldSelf": True}
        ),
        [(INV, f"{SPEC}.x-kubernetes-validations[1].optionalOldSelf")],
    ),
    (
        "cel-rule-inside-allof",
        on_spec_props(lambda p: p["image"].update(allOf=[{"x-kubernetes-validations": [{"rule": "true"}]}])),
        [(FORB, f"{SPEC}.properties[image].allOf[0].x-kubernetes-validations")],
    ),
    # --- strict decoding -------------------------------------------------------------------------
    (
        "unknown-schema-keyword",
        on_spec_props(lambda p: p["image"].update(examples=["nginx"])),
        [("Unknown field", f"{V0}.schema.openAPIV3Schema.properties[spec].properties[image].examples")],
    ),
]


@pytest.mark.parametrize(("mutation", "expected"), [(m, e) for _, m, e in CASES], ids=[c[0] for c in CASES])
def test_invalid_crd_reports_exact_errors(
    mutation: Callable[[dict[str, Any]], None], expected: list[tuple[str, str]]
) -> None:
    crd = base_crd()
    mutation(crd)
    errors = check_crd(crd)
    assert sorted((e.type, e.field) for e in errors) == sorted(expected), "\n".join(map(str, errors))


def test_there_are_at_least_forty_invalid_cases() -> None:
    assert sum(1 for _, _, expected in CASES if expected) >= 40
