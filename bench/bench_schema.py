"""Schema admission of one custom resource write: the compiled schema (`pyop.schema.compiled`, what the registry
uses) against the interpreter (`pyop.schema`'s functions), interleaved in one process, CPU time per admit().

Two kinds: bench_informer's Widget (the HTTP benchmark's CRD) and a controller-gen style schema (metadata
`type: object`, nested objects, defaults, enums, patterns, a list-type map, int-or-string) with an object that
passes it. Run: `python bench/bench_schema.py [--rounds 5] [--writes 20000]`. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_informer import CRD, small_object  # noqa: E402

from pyop.apiserver.registry.schema import admit  # noqa: E402
from pyop.schema.compiled import CompiledSchema  # noqa: E402

WIDGET_SCHEMA: dict[str, Any] = CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
PORT = {
    "type": "object",
    "required": ["name", "port"],
    "properties": {
        "name": {"type": "string", "maxLength": 15, "pattern": "^[a-z]([-a-z0-9]*[a-z0-9])?$"},
        "port": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535},
        "protocol": {"type": "string", "default": "TCP", "enum": ["TCP", "UDP", "SCTP"]},
        "targetPort": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
    },
}
APP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["image"],
            "properties": {
                "image": {"type": "string", "minLength": 1},
                "replicas": {"type": "integer", "format": "int32", "minimum": 0, "default": 1},
                "paused": {"type": "boolean"},
                "env": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
                    },
                },
                "ports": {
                    "type": "array",
                    "items": PORT,
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port"],
                },
                "resources": {
                    "type": "object",
                    "properties": {
                        "limits": {"type": "object", "additionalProperties": {"type": "string"}},
                        "requests": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                },
                "strategy": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string", "enum": ["Recreate", "RollingUpdate"], "default": "RollingUpdate"}
                    },
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "observedGeneration": {"type": "integer", "format": "int64"},
                "conditions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "type": {"type": "string"},
                            "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                            "reason": {"type": "string"},
                            "lastTransitionTime": {"type": "string", "format": "date-time"},
                        },
                    },
                },
            },
        },
    },
}


def app_object(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps.example.com/v1",
        "kind": "App",
        "metadata": {"name": f"app-{i}", "namespace": "default", "labels": {"app": "bench"}},
        "spec": {
            "image": "nginx:1.27",
            "replicas": 3,
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            "ports": [
                {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
                {"name": "https", "port": 443, "protocol": "TCP", "targetPort": "https"},
            ],
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "100m"}},
            "strategy": {"type": "RollingUpdate"},
        },
        "status": {
            "observedGeneration": 2,
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "Up", "lastTransitionTime": "2026-01-01T00:00:00Z"}
            ],
        },
    }


def per_admit(objects: list[dict[str, Any]], schema: dict[str, Any], compiled: CompiledSchema | None) -> float:
    began = time.process_time()
    for obj in objects:
        admit(obj, schema, warnings=[], compiled=compiled)
    return (time.process_time() - began) / len(objects)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--writes", type=int, default=20_000)
    options = parser.parse_args()
    kinds = {
        "Widget": (WIDGET_SCHEMA, [small_object(i) for i in range(options.writes)]),
        "App (controller-gen style)": (APP_SCHEMA, [app_object(i) for i in range(options.writes)]),
    }
    print(f"admit() CPU per write, median of {options.rounds} interleaved rounds of {options.writes}")
    for label, (schema, objects) in kinds.items():
        compiled = CompiledSchema(schema)
        samples: dict[str, list[float]] = {"interpreted": [], "compiled": []}
        for number in range(options.rounds):
            order = [None, compiled] if number % 2 == 0 else [compiled, None]
            for side in order:
                samples["compiled" if side is not None else "interpreted"].append(per_admit(objects, schema, side))
        old, new = statistics.median(samples["interpreted"]), statistics.median(samples["compiled"])
        print(f"  {label:<28} interpreted {old * 1e6:6.2f} us   compiled {new * 1e6:6.2f} us   x{old / new:.2f}")


if __name__ == "__main__":
    main()
