"""A structural schema with every feature pruning, null pruning and defaulting look at, shared by the schema tests.

Defaults nested, in list items and in map values; nullable; embedded resources; preserved unknown fields;
additionalProperties true and schema-valued. `status` is not specified: tests that want it add it.
"""

from __future__ import annotations

from typing import Any

WORKLOAD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "default": 1},
                "strategy": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string", "default": "RollingUpdate"},
                        "rolling": {
                            "type": "object",
                            "default": {},
                            "properties": {"maxSurge": {"type": "integer", "default": 25}},
                        },
                    },
                },
                "note": {"type": "string", "default": "none"},
                "comment": {"type": "string"},
                "optional": {"type": "string", "nullable": True, "default": "x"},
                "ports": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"protocol": {"type": "string", "default": "TCP"}, "port": {"type": "integer"}},
                    },
                },
                "env": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"value": {"type": "string", "default": ""}},
                    },
                },
                "raw": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}},
                },
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object", "properties": {"image": {"type": "string"}}}},
                },
                "anything": {"type": "object", "additionalProperties": True},
            },
        },
    },
}
