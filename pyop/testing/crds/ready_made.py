"""Ready-made CustomResourceDefinitions for tests that need a kind but not its schema."""

from __future__ import annotations

from typing import Any


def schemaless_crd(
    group: str, kind: str, plural: str, *, version: str = "v1", scope: str = "Namespaced"
) -> dict[str, Any]:
    """A CRD whose spec and status keep any fields, with the status subresource on.

    For testing controllers of kinds whose schema does not matter to the test (or of external kinds with no model
    in the project): the test API server serves it like any CRD.
    """
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            },
                        }
                    },
                }
            ],
        },
    }
