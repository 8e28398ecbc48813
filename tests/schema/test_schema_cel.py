"""CEL rules at validation time (cel-python): definite failures are reported, engine gaps are not."""

from __future__ import annotations

from typing import Any

from pyop.schema import validate

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.minReplicas <= self.replicas", "message": "minReplicas must not exceed replicas"},
                {"rule": "self.replicas != 13", "fieldPath": ".replicas", "reason": "FieldValueForbidden"},
                {
                    "rule": "self.replicas >= oldSelf.replicas",
                    "messageExpression": "'cannot scale down to ' + string(self.replicas)",
                },
                {"rule": "self.name.lowerAscii() == self.name"},
            ],
            "properties": {
                "replicas": {"type": "integer"},
                "minReplicas": {"type": "integer"},
                "name": {"type": "string"},
                "labels": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "string",
                        "x-kubernetes-validations": [{"rule": "self.size() <= 3", "message": "too long"}],
                    },
                },
            },
        },
    },
    "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('ok')", "message": "bad name"}],
}


def obj(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "ok-1", "labels": {"x": "y"}},
        "spec": {"replicas": 2, "minReplicas": 1, "name": "a", **spec},
    }


def test_passing_rules_give_no_error() -> None:
    assert validate(obj(), SCHEMA) == []


def test_failing_rule_reports_message_at_node() -> None:
    assert [str(e) for e in validate(obj(minReplicas=5), SCHEMA)] == [
        'spec: Invalid value: "object": minReplicas must not exceed replicas'
    ]


def test_field_path_and_reason_shape_the_error() -> None:
    assert [str(e) for e in validate(obj(replicas=13), SCHEMA)] == [
        "spec.replicas: Forbidden: failed rule: self.replicas != 13"
    ]


def test_map_values_use_bracketed_keys() -> None:
    assert [str(e) for e in validate(obj(labels={"team": "platform"}), SCHEMA)] == [
        'spec.labels[team]: Invalid value: "string": too long'
    ]


def test_root_rule_sees_metadata_name() -> None:
    bad = obj()
    bad["metadata"]["name"] = "nope"
    assert [str(e) for e in validate(bad, SCHEMA)] == ['<nil>: Invalid value: "object": bad name']


def test_transition_rule_runs_only_with_old_object() -> None:
    assert validate(obj(replicas=1), SCHEMA) == []
    assert [str(e) for e in validate(obj(replicas=1), SCHEMA, old=obj(replicas=3))] == [
        'spec: Invalid value: "object": cannot scale down to 1'
    ]


def test_missing_field_is_a_runtime_error_like_the_api_server() -> None:
    value = obj()
    del value["spec"]["minReplicas"]
    errors = validate(value, SCHEMA)
    assert [(e.type, e.field) for e in errors] == [("Invalid value", "spec")]
    assert "no such key: minReplicas" in errors[0].detail


def test_type_errors_block_rule_evaluation() -> None:
    errors = validate(obj(replicas="two", minReplicas=5), SCHEMA)
    assert [str(e) for e in errors] == [
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
        "correct the existing errors to complete validation",
    ]


def test_rules_can_be_disabled() -> None:
    assert validate(obj(minReplicas=5), SCHEMA, rules=False) == []
