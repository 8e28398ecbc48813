"""A valid CRD to mutate per test case, and richer valid CRDs."""

from __future__ import annotations

import copy
from typing import Any


def base_crd() -> dict[str, Any]:
    """Single-version namespaced CRD with status and scale subresources, columns and a CEL rule."""
    return copy.deepcopy(_BASE)


_BASE: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "foos.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"plural": "foos", "singular": "foo", "kind": "Foo", "listKind": "FooList", "shortNames": ["fo"]},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.selector",
                    },
                },
                "additionalPrinterColumns": [
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "apiVersion": {"type": "string"},
                            "kind": {"type": "string"},
                            "metadata": {"type": "object"},
                            "spec": {
                                "type": "object",
                                "x-kubernetes-validations": [
                                    {"rule": "self.minReplicas <= self.replicas", "message": "min above replicas"}
                                ],
                                "properties": {
                                    "replicas": {"type": "integer", "format": "int32", "minimum": 0, "default": 1},
                                    "minReplicas": {"type": "integer", "default": 0},
                                    "image": {"type": "string", "maxLength": 253},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer"},
                                    "selector": {"type": "string"},
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}


def rich_crd() -> dict[str, Any]:
    """Two versions with different schemas: nested objects, int-or-string, embedded resources,
    list-type maps and sets, maps, CEL (incl. transition rules), printer columns, scale."""
    v1_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 63}}},
            "spec": {
                "type": "object",
                "required": ["template"],
                "x-kubernetes-validations": [
                    {
                        "rule": "!has(self.paused) || self.replicas >= 0",
                        "reason": "FieldValueForbidden",
                        "fieldPath": ".replicas",
                    },
                    {
                        "rule": "self.replicas >= oldSelf.replicas || self.allowScaleDown",
                        "message": "scale down not allowed",
                        "optionalOldSelf": True,
                    },
                ],
                "properties": {
                    "replicas": {"type": "integer", "default": 1},
                    "allowScaleDown": {"type": "boolean", "default": False},
                    "paused": {"type": "boolean"},
                    "port": {
                        "x-kubernetes-int-or-string": True,
                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                        "pattern": "^[0-9]+$|^[a-z-]+$",
                    },
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "x-kubernetes-preserve-unknown-fields": True,
                    },
                    "config": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "properties": {
                            "apiVersion": {"type": "string"},
                            "kind": {"type": "string"},
                            "metadata": {"type": "object"},
                            "data": {"type": "object", "additionalProperties": {"type": "string"}},
                        },
                    },
                    "ports": {
                        "type": "array",
                        "maxItems": 16,
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name", "protocol"],
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "x-kubernetes-validations": [{"rule": "self.port > 0 && self.port < 65536"}],
                            "properties": {
                                "name": {"type": "string", "maxLength": 15},
                                "protocol": {"type": "string", "enum": ["TCP", "UDP"], "default": "TCP"},
                                "port": {"type": "integer", "format": "int32"},
                            },
                        },
                    },
                    "tags": {
                        "type": "array",
                        "x-kubernetes-list-type": "set",
                        "items": {"type": "string", "maxLength": 32},
                        "x-kubernetes-validations": [{"rule": "self.all(t, t.size() > 0)"}],
                    },
                    "selector": {
                        "type": "object",
                        "x-kubernetes-map-type": "atomic",
                        "properties": {
                            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
                        },
                    },
                    "schedule": {
                        "type": "object",
                        "oneOf": [{"required": ["cron"]}, {"required": ["interval"]}],
                        "properties": {
                            "cron": {"type": "string"},
                            "interval": {"type": "string", "format": "duration"},
                        },
                    },
                    "extra": {"x-kubernetes-preserve-unknown-fields": True},
                },
            },
            "status": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "conditions": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["type"],
                        "items": {
                            "type": "object",
                            "required": ["type", "status"],
                            "properties": {
                                "type": {"type": "string"},
                                "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                                "lastTransitionTime": {"type": "string", "format": "date-time"},
                            },
                        },
                    },
                },
            },
        },
    }
    v2_schema = copy.deepcopy(v1_schema)
    v2_schema["properties"]["spec"]["properties"]["priority"] = {"type": "string", "enum": ["low", "high"]}
    version_common: dict[str, Any] = {
        "subresources": {
            "status": {},
            "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
        },
        "additionalPrinterColumns": [
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {
                "name": "Ready",
                "type": "string",
                "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
                "priority": 1,
            },
        ],
        "selectableFields": [{"jsonPath": ".spec.paused"}],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.apps.example.org"},
        "spec": {
            "group": "apps.example.org",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "categories": ["all"]},
            "scope": "Cluster",
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": False,
                    "deprecated": True,
                    "deprecationWarning": "apps.example.org/v1alpha1 Widget is deprecated",
                    "schema": {"openAPIV3Schema": v1_schema},
                    **copy.deepcopy(version_common),
                },
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": v2_schema},
                    **copy.deepcopy(version_common),
                },
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"service": {"namespace": "system", "name": "webhook", "path": "/convert"}},
                },
            },
        },
    }
