"""The kubectl runner and the CRD the kubectl tests install (a printer column of every type)."""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyop.testing import TestAPIServer

GUARD = 60.0  # seconds: a failure guard for one kubectl run, never an expectation


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Kubectl:
    binary: str
    server: TestAPIServer
    home: Path

    async def __call__(self, *args: str, stdin: str | None = None, check: bool = True) -> Result:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "KUBECONFIG": str(self.server.kubeconfig_path),
        }
        process = await asyncio.create_subprocess_exec(
            self.binary,
            *args,
            "--cache-dir",
            str(self.home / "cache"),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        out, err = await asyncio.wait_for(process.communicate(stdin.encode() if stdin is not None else None), GUARD)
        result = Result(process.returncode or 0, out.decode(), err.decode())
        if check:
            assert result.returncode == 0, f"kubectl {' '.join(args)} failed:\n{result.stderr}"
        return result


def table(text: str) -> list[list[str]]:
    """kubectl's columns, split on runs of two or more spaces (cells never hold two spaces here)."""
    return [re.split(r"\s{2,}", line.strip()) for line in text.splitlines() if line.strip()]


WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.pyop.dev"},
    "spec": {
        "group": "example.pyop.dev",
        "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
                    {"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused"},
                    {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
                    {"name": "Owner", "type": "string", "jsonPath": ".spec.owner", "priority": 1},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "description": "Widget is the test kind of the kubectl tests.",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "description": "WidgetSpec is what the user wants.",
                                "properties": {
                                    "replicas": {"type": "integer", "description": "How many widgets."},
                                    "ratio": {"type": "number"},
                                    "paused": {"type": "boolean"},
                                    "owner": {"type": "string"},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "conditions": {
                                        "type": "array",
                                        "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                    }
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}

WIDGETS = "/apis/example.pyop.dev/v1/namespaces/default/widgets"


def widget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.pyop.dev/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


def clone(value: Any) -> Any:
    return json.loads(json.dumps(value))
