"""Behaviour of `pyop_scaffold.manifests.builtin.builtin_schema`: structural, controller-gen-shaped, safe to mutate."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from pyop_scaffold.manifests.builtin import (
    PINNED_KUBERNETES_VERSION,
    QUANTITY_PATTERN,
    UnknownBuiltinDefinition,
    UnsupportedKubernetesVersion,
    available_kubernetes_versions,
    builtin_definitions,
    builtin_schema,
)
from pyop_scaffold.manifests.builtin.known_types import UPSTREAM_FIELD_MARKERS
from pyop_scaffold.manifests.builtin.source import load_definitions

CORE = "io.k8s.api.core.v1."
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"

COMMON_DEFINITIONS = [
    *(
        CORE + name
        for name in (
            "PodTemplateSpec",
            "PodSpec",
            "Container",
            "ContainerPort",
            "EnvVar",
            "EnvFromSource",
            "Volume",
            "VolumeMount",
            "ResourceRequirements",
            "Probe",
            "SecurityContext",
            "PodSecurityContext",
            "Affinity",
            "Toleration",
            "TopologySpreadConstraint",
            "LocalObjectReference",
            "ObjectReference",
            "TypedLocalObjectReference",
            "SecretKeySelector",
            "ConfigMapKeySelector",
            "SecretReference",
            "ServicePort",
            "ServiceSpec",
            "PersistentVolumeClaimSpec",
        )
    ),
    META + "LabelSelector",
    META + "Condition",
    META + "ObjectMeta",
    META + "OwnerReference",
    "io.k8s.api.batch.v1.JobSpec",
    "io.k8s.api.batch.v1.JobTemplateSpec",
    "io.k8s.api.batch.v1.CronJobSpec",
    "io.k8s.api.apps.v1.DeploymentSpec",
    "io.k8s.api.apps.v1.StatefulSetSpec",
]

INT_OR_STRING_FORM = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
CONTROLLER_GEN_QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
QUANTITY_FORM = {**INT_OR_STRING_FORM, "pattern": CONTROLLER_GEN_QUANTITY_PATTERN}
DATE_TIME_FORM = {"format": "date-time", "type": "string"}


def walk(node: Any, path: str = "$") -> Iterator[tuple[str, Any]]:
    """Every (path, value) pair below `node`, dict keys and list items alike."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk(value, f"{path}[{index}]")


def schema_nodes(schema: dict[str, Any], path: str = "$") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema node (not every dict: `properties` maps and `default` values are skipped)."""
    yield path, schema
    for name, child in schema.get("properties", {}).items():
        yield from schema_nodes(child, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from schema_nodes(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from schema_nodes(schema["additionalProperties"], f"{path}{{}}")
    for index, branch in enumerate(schema.get("anyOf", [])):
        yield from schema_nodes(branch, f"{path}.anyOf[{index}]")


def dig(schema: dict[str, Any], *path: str) -> dict[str, Any]:
    """Follow property names; `[]` steps into array items and `{}` into additionalProperties."""
    node = schema
    for step in path:
        if step == "[]":
            node = node["items"]
        elif step == "{}":
            node = node["additionalProperties"]
        else:
            node = node["properties"][step]
    return node


def without_description(schema: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if key != "description"}


@pytest.mark.parametrize("definition", COMMON_DEFINITIONS, ids=lambda d: d.rsplit(".", 1)[-1])
class TestCommonDefinitionsAreStructural:
    def test_no_ref_or_json_schema_only_keys_anywhere(self, definition: str) -> None:
        schema = builtin_schema(definition)
        leftovers = [
            path
            for path, value in walk(schema)
            if isinstance(value, dict)
            and {"$ref", "$schema", "$id", "x-kubernetes-group-version-kind", "x-kubernetes-patch-strategy"}
            & set(value)
        ]
        assert leftovers == []

    def test_every_object_node_has_a_type(self, definition: str) -> None:
        schema = builtin_schema(definition)
        untyped = [
            path
            for path, node in schema_nodes(schema)
            if ("properties" in node or isinstance(node.get("additionalProperties"), dict))
            and node.get("type") != "object"
        ]
        assert untyped == []

    def test_passes_the_api_servers_acceptance_rules(self, definition: str) -> None:
        from pyop_scaffold.manifests.acceptance import check_crd

        crd = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "wrappers.test.example.com"},
            "spec": {
                "group": "test.example.com",
                "names": {"kind": "Wrapper", "listKind": "WrapperList", "plural": "wrappers", "singular": "wrapper"},
                "scope": "Namespaced",
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {"type": "object", "properties": {"embedded": builtin_schema(definition)}}
                                },
                            }
                        },
                    }
                ],
            },
        }
        assert check_crd(crd) == []

    def test_no_strict_mode_additional_properties_false(self, definition: str) -> None:
        schema = builtin_schema(definition)
        assert [path for path, node in schema_nodes(schema) if node.get("additionalProperties") is False] == []

    def test_required_lists_are_sorted_and_name_existing_properties(self, definition: str) -> None:
        for path, node in schema_nodes(builtin_schema(definition)):
            required = node.get("required", [])
            assert required == sorted(required), path
            assert set(required) <= set(node.get("properties", {})), path


class TestSpecialTypeForms:
    def test_int_or_string(self) -> None:
        assert builtin_schema(INT_OR_STRING) == INT_OR_STRING_FORM

    def test_quantity_uses_controller_gens_pattern(self) -> None:
        assert builtin_schema(QUANTITY) == QUANTITY_FORM
        assert QUANTITY_PATTERN == CONTROLLER_GEN_QUANTITY_PATTERN

    @pytest.mark.parametrize("quantity", ["500m", "1Gi", "2", "1.5", "+1e3", ".5Ki", "-20M"])
    def test_quantity_pattern_accepts_kubernetes_quantities(self, quantity: str) -> None:
        assert re.fullmatch(QUANTITY_PATTERN, quantity)

    @pytest.mark.parametrize("not_a_quantity", ["abc", "1.2.3", "5 Gi", "1GB", ""])
    def test_quantity_pattern_rejects_other_strings(self, not_a_quantity: str) -> None:
        assert re.fullmatch(QUANTITY_PATTERN, not_a_quantity) is None

    @pytest.mark.parametrize("name", ["Time", "MicroTime"])
    def test_times_are_date_time_strings(self, name: str) -> None:
        assert builtin_schema(META + name) == DATE_TIME_FORM

    def test_duration_is_a_plain_string(self) -> None:
        assert builtin_schema(META + "Duration") == {"type": "string"}

    def test_raw_extension_keeps_unknown_fields(self) -> None:
        assert builtin_schema(RAW_EXTENSION) == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

    def test_embedded_quantities_int_or_strings_and_times_use_the_same_forms(self) -> None:
        resources = builtin_schema(CORE + "ResourceRequirements")
        assert dig(resources, "limits", "{}") == QUANTITY_FORM
        assert dig(resources, "requests", "{}") == QUANTITY_FORM
        probe = builtin_schema(CORE + "Probe")
        assert without_description(dig(probe, "httpGet", "port")) == INT_OR_STRING_FORM
        assert dig(probe, "httpGet", "port")["description"].startswith("Name or number of the port")
        condition = builtin_schema(META + "Condition")
        assert without_description(dig(condition, "lastTransitionTime")) == DATE_TIME_FORM

    def test_json_schema_oneofs_are_gone(self) -> None:
        pod = builtin_schema(CORE + "PodTemplateSpec")
        assert [path for path, value in walk(pod) if isinstance(value, dict) and "oneOf" in value] == []


class TestControllerGenShape:
    def test_pod_spec_containers_is_a_map_list_keyed_by_name(self) -> None:
        containers = dig(builtin_schema(CORE + "PodSpec"), "containers")
        assert containers["type"] == "array"
        assert containers["x-kubernetes-list-type"] == "map"
        assert containers["x-kubernetes-list-map-keys"] == ["name"]
        assert "name" in containers["items"]["required"]

    def test_condition_required_fields(self) -> None:
        condition = builtin_schema(META + "Condition")
        assert condition["required"] == ["lastTransitionTime", "message", "reason", "status", "type"]

    def test_condition_carries_its_kubebuilder_validation_markers(self) -> None:
        condition = builtin_schema(META + "Condition", descriptions=False)["properties"]
        assert condition["status"] == {"enum": ["True", "False", "Unknown"], "type": "string"}
        assert condition["observedGeneration"] == {"format": "int64", "minimum": 0, "type": "integer"}
        assert condition["reason"]["minLength"] == 1 and condition["reason"]["maxLength"] == 1024
        assert condition["message"] == {"maxLength": 32768, "type": "string"}
        assert condition["type"]["maxLength"] == 316
        assert re.fullmatch(condition["type"]["pattern"], "example.com/Ready")
        assert re.fullmatch(condition["type"]["pattern"], "not a type") is None

    def test_integer_formats_are_kept(self) -> None:
        port = builtin_schema(CORE + "ContainerPort", descriptions=False)["properties"]
        assert port["containerPort"] == {"format": "int32", "type": "integer"}
        assert dig(builtin_schema(CORE + "PodSpec"), "activeDeadlineSeconds")["format"] == "int64"

    def test_optional_fields_lose_the_json_schema_null_type(self) -> None:
        types = {node.get("type") for _, node in schema_nodes(builtin_schema(CORE + "PodSpec"))}
        assert types <= {"array", "boolean", "integer", "object", "string", None}

    def test_protocol_fields_default_to_tcp_like_controller_gens_known_type(self) -> None:
        ports = dig(builtin_schema(CORE + "Container"), "ports")
        assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
        assert dig(ports, "[]", "protocol")["default"] == "TCP"
        assert dig(builtin_schema(CORE + "ServicePort"), "protocol")["default"] == "TCP"

    def test_local_object_reference_names_default_to_empty_even_when_embedded_inline(self) -> None:
        pod = builtin_schema(CORE + "PodSpec")
        assert dig(pod, "imagePullSecrets", "[]", "name")["default"] == ""
        env_source = dig(pod, "containers", "[]", "env", "[]", "valueFrom")
        assert dig(env_source, "secretKeyRef", "name")["default"] == ""
        assert dig(env_source, "configMapKeyRef", "name")["default"] == ""
        assert "default" not in dig(env_source, "secretKeyRef", "key")

    def test_grpc_service_defaults_to_empty(self) -> None:
        assert dig(builtin_schema(CORE + "Probe"), "grpc", "service")["default"] == ""

    def test_upstream_markers_all_land_on_existing_properties_of_the_pinned_version(self) -> None:
        definitions = load_definitions(PINNED_KUBERNETES_VERSION)
        missing = [
            (entry.definition, entry.property)
            for entry in UPSTREAM_FIELD_MARKERS
            if entry.property not in definitions.get(entry.definition, {}).get("properties", {})
        ]
        assert missing == []

    def test_type_meta_enums_of_top_level_kinds_are_dropped(self) -> None:
        deployment = builtin_schema("io.k8s.api.apps.v1.Deployment", descriptions=False)
        assert dig(deployment, "apiVersion") == {"type": "string"}
        assert dig(deployment, "kind") == {"type": "string"}

    def test_field_map_type_overrides_the_referenced_types(self) -> None:
        assert builtin_schema(CORE + "ObjectReference")["x-kubernetes-map-type"] == "atomic"
        claim_ref = dig(builtin_schema(CORE + "PersistentVolumeSpec"), "claimRef")
        assert claim_ref["x-kubernetes-map-type"] == "granular"

    def test_keys_are_sorted_like_controller_gens_yaml(self) -> None:
        for path, node in schema_nodes(builtin_schema(CORE + "Container")):
            assert list(node) == sorted(node), path
            if "properties" in node:
                assert list(node["properties"]) == sorted(node["properties"]), path


class TestObjectMeta:
    def test_embedded_metadata_is_a_bare_object_by_default(self) -> None:
        metadata = dig(builtin_schema(CORE + "PodTemplateSpec"), "metadata")
        assert without_description(metadata) == {"type": "object"}
        assert metadata["description"].startswith("Standard object's metadata")

    def test_generate_embedded_object_meta_keeps_the_allow_listed_fields(self) -> None:
        metadata = dig(builtin_schema(CORE + "PodTemplateSpec", embedded_object_meta=True), "metadata")
        assert metadata["type"] == "object"
        assert metadata["properties"] == {
            "annotations": {"additionalProperties": {"type": "string"}, "type": "object"},
            "finalizers": {"items": {"type": "string"}, "type": "array"},
            "labels": {"additionalProperties": {"type": "string"}, "type": "object"},
            "name": {"type": "string"},
            "namespace": {"type": "string"},
        }

    def test_object_meta_asked_for_directly_follows_the_same_option(self) -> None:
        assert builtin_schema(META + "ObjectMeta") == {"type": "object"}
        assert set(builtin_schema(META + "ObjectMeta", embedded_object_meta=True)["properties"]) == {
            "annotations",
            "finalizers",
            "labels",
            "name",
            "namespace",
        }


class TestDescriptions:
    def test_kept_by_default_with_the_fields_doc_winning_over_its_types(self) -> None:
        template = builtin_schema(CORE + "PodTemplateSpec")
        assert template["description"].startswith("PodTemplateSpec describes")
        spec = dig(template, "spec")
        assert spec["description"].startswith("Specification of the desired behavior of the pod")
        assert builtin_schema(CORE + "PodSpec")["description"] == "PodSpec is a description of a pod."

    def test_array_items_carry_their_types_description(self) -> None:
        items = dig(builtin_schema(CORE + "PodSpec"), "containers", "[]")
        assert items["description"] == "A single application container that you want to run within a pod."

    def test_dropped_entirely_on_request(self) -> None:
        schema = builtin_schema(CORE + "PodTemplateSpec", descriptions=False)
        assert [path for path, node in schema_nodes(schema) if "description" in node] == []
        assert dig(schema, "spec", "containers")["x-kubernetes-list-map-keys"] == ["name"]


class TestCopiesAndCaching:
    def test_mutating_a_result_does_not_leak_into_the_next_call(self) -> None:
        first = builtin_schema(CORE + "PodTemplateSpec")
        first["properties"]["spec"]["properties"]["containers"]["items"]["required"].append("image")
        first["properties"].pop("metadata")
        first["type"] = "string"
        second = builtin_schema(CORE + "PodTemplateSpec")
        assert second["type"] == "object"
        assert "metadata" in second["properties"]
        assert dig(second, "spec", "containers", "[]")["required"] == ["name"]

    def test_each_call_returns_distinct_nested_objects(self) -> None:
        first = builtin_schema(CORE + "Container")
        second = builtin_schema(CORE + "Container")
        assert first == second
        assert first is not second
        assert dig(first, "ports") is not dig(second, "ports")

    def test_options_are_cached_separately(self) -> None:
        with_descriptions = builtin_schema(CORE + "Container")
        without = builtin_schema(CORE + "Container", descriptions=False)
        assert "description" in with_descriptions and "description" not in without


class TestRecursion:
    JSON_SCHEMA_PROPS = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"

    def test_recursive_definitions_are_cut_with_preserve_unknown_fields(self) -> None:
        props = builtin_schema(self.JSON_SCHEMA_PROPS, descriptions=False)
        assert dig(props, "not") == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        assert dig(props, "properties", "{}") == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        assert dig(props, "allOf", "[]") == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

    def test_any_json_values_keep_unknown_fields_without_a_type(self) -> None:
        props = builtin_schema(self.JSON_SCHEMA_PROPS, descriptions=False)
        assert dig(props, "default") == {"x-kubernetes-preserve-unknown-fields": True}

    def test_a_whole_crd_definition_expands_finitely(self) -> None:
        crd = builtin_schema("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition")
        depth = max(path.count(".") for path, _ in schema_nodes(crd))
        assert 3 < depth < 40


class TestErrors:
    def test_unknown_definition_is_a_key_error_naming_it_and_the_closest_names(self) -> None:
        with pytest.raises(KeyError) as caught:
            builtin_schema("io.k8s.api.core.v1.PodSpecc")
        error = caught.value
        assert isinstance(error, UnknownBuiltinDefinition)
        assert error.definition == "io.k8s.api.core.v1.PodSpecc"
        assert "io.k8s.api.core.v1.PodSpec" in error.suggestions
        assert "'io.k8s.api.core.v1.PodSpecc'" in str(error)
        assert "io.k8s.api.core.v1.PodSpec," in str(error)

    def test_short_names_suggest_the_full_definition(self) -> None:
        with pytest.raises(UnknownBuiltinDefinition) as caught:
            builtin_schema("PodTemplateSpec")
        assert caught.value.suggestions[0] == "io.k8s.api.core.v1.PodTemplateSpec"

    def test_unsupported_version_lists_the_bundled_ones(self) -> None:
        with pytest.raises(UnsupportedKubernetesVersion) as caught:
            builtin_schema(CORE + "PodSpec", kubernetes_version="1.2")
        assert PINNED_KUBERNETES_VERSION in str(caught.value)
        with pytest.raises(UnsupportedKubernetesVersion):
            builtin_schema(CORE + "PodSpec", kubernetes_version="latest")


class TestVersions:
    def test_pinned_version_is_bundled(self) -> None:
        assert PINNED_KUBERNETES_VERSION in available_kubernetes_versions()

    @pytest.mark.parametrize("spelling", ["v1.32", "1.32.0", "1.32.7"])
    def test_version_spellings_resolve_to_the_minor_release(self, spelling: str) -> None:
        assert builtin_schema(CORE + "Container", kubernetes_version=spelling) == builtin_schema(
            CORE + "Container", kubernetes_version="1.32"
        )

    def test_another_bundled_version_can_be_targeted(self) -> None:
        oldest, newest = available_kubernetes_versions()[0], available_kubernetes_versions()[-1]
        only_newer = sorted(builtin_definitions(newest) - builtin_definitions(oldest))
        assert only_newer, "expected the newest bundled release to add definitions"
        assert builtin_schema(only_newer[0], kubernetes_version=newest)["type"] in {"object", "string"}
        with pytest.raises(UnknownBuiltinDefinition):
            builtin_schema(only_newer[0], kubernetes_version=oldest)

    @pytest.mark.parametrize("version", [PINNED_KUBERNETES_VERSION, available_kubernetes_versions()[-1]])
    def test_every_bundled_definition_converts(self, version: str) -> None:
        failures = {}
        for definition in sorted(builtin_definitions(version)):
            try:
                builtin_schema(definition, kubernetes_version=version, descriptions=False)
            except Exception as exc:  # collect them all for one readable failure
                failures[definition] = repr(exc)
        assert failures == {}


class TestMatchesControllerGenOutput:
    """Nodes of controller-gen's CronJob golden (pkg/crd/testdata, which embeds a PodSpec), descriptions left out;
    integer formats as controller-gen v0.21 writes them."""

    def test_container_port(self) -> None:
        assert builtin_schema(CORE + "ContainerPort", descriptions=False) == {
            "properties": {
                "containerPort": {"format": "int32", "type": "integer"},
                "hostIP": {"type": "string"},
                "hostPort": {"format": "int32", "type": "integer"},
                "name": {"type": "string"},
                "protocol": {"default": "TCP", "type": "string"},
            },
            "required": ["containerPort"],
            "type": "object",
        }

    def test_secret_key_selector(self) -> None:
        assert builtin_schema(CORE + "SecretKeySelector", descriptions=False) == {
            "properties": {
                "key": {"type": "string"},
                "name": {"default": "", "type": "string"},
                "optional": {"type": "boolean"},
            },
            "required": ["key"],
            "type": "object",
            "x-kubernetes-map-type": "atomic",
        }

    def test_resource_requirements(self) -> None:
        assert builtin_schema(CORE + "ResourceRequirements", descriptions=False) == {
            "properties": {
                "claims": {
                    "items": {
                        "properties": {"name": {"type": "string"}, "request": {"type": "string"}},
                        "required": ["name"],
                        "type": "object",
                    },
                    "type": "array",
                    "x-kubernetes-list-map-keys": ["name"],
                    "x-kubernetes-list-type": "map",
                },
                "limits": {"additionalProperties": QUANTITY_FORM, "type": "object"},
                "requests": {"additionalProperties": QUANTITY_FORM, "type": "object"},
            },
            "type": "object",
        }

    def test_tcp_socket_action(self) -> None:
        assert builtin_schema(CORE + "TCPSocketAction", descriptions=False) == {
            "properties": {"host": {"type": "string"}, "port": INT_OR_STRING_FORM},
            "required": ["port"],
            "type": "object",
        }
