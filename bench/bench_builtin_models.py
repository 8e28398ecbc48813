"""What the generated built-in models cost: import time, and validation/dump per Deployment against plain dicts.

Run: python bench/bench_builtin_models.py [--runs N]

Import times come from fresh interpreters (after `import pydantic, pyop.api`, which every operator pays anyway),
interleaved so the machine's drifting speed hits every variant alike: one Deployment, three kinds of three groups
(what a typical manager touches), every root kind. Per-object costs use a realistic Deployment (two containers
with probes, resources, env, volumes, a status with conditions): `model_validate` of the API server's JSON and the
dump back to it, next to a `copy.deepcopy` of the same dict (what a dict-based controller pays to get a private copy).
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

_PRELUDE = "import time, pydantic, pyop.api\nstart = time.perf_counter()\n"
VARIANTS: dict[str, str] = {
    "nothing (baseline)": "pass",
    "Deployment (apps/v1)": "from pyop.api.k8s.apps.v1 import Deployment",
    "Deployment + Service + Job": (
        "from pyop.api.k8s.apps.v1 import Deployment\n"
        "from pyop.api.k8s.core.v1 import Service\n"
        "from pyop.api.k8s.batch.v1 import Job"
    ),
    "ConfigMap (core/v1)": "from pyop.api.k8s.core.v1 import ConfigMap",
    "every root kind": (
        "import importlib\nfrom pyop.api.k8s._index import ROOT_KINDS\n"
        "for row in ROOT_KINDS: getattr(importlib.import_module('pyop.api.k8s.' + row[5]), row[2])"
    ),
}
_REPORT = (
    "\nimport resource, sys\nelapsed = time.perf_counter() - start\n"
    "print(elapsed, sum(1 for m in sys.modules if m.startswith('pyop.api.k8s.') and '._' in m),"
    " resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
)

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "namespace": "shop",
        "uid": "4a1e0b5e-58d4-4c1c-9a0e-0b1f0f6c2a11",
        "resourceVersion": "123456",
        "generation": 4,
        "creationTimestamp": "2026-01-10T08:00:00Z",
        "labels": {"app": "web", "tier": "frontend"},
        "annotations": {"deployment.kubernetes.io/revision": "4"},
        "ownerReferences": [
            {"apiVersion": "shop.example.com/v1", "kind": "Store", "name": "main", "uid": "u-1", "controller": True}
        ],
    },
    "spec": {
        "replicas": 3,
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
        "template": {
            "metadata": {"labels": {"app": "web", "tier": "frontend"}},
            "spec": {
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst",
                "schedulerName": "default-scheduler",
                "securityContext": {"runAsNonRoot": True},
                "volumes": [{"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}}],
                "containers": [
                    {
                        "name": name,
                        "image": f"registry.example.com/{name}:1.4.2",
                        "imagePullPolicy": "IfNotPresent",
                        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                        "env": [
                            {"name": "MODE", "value": "production"},
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        ],
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                        "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 5},
                        "livenessProbe": {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 10},
                        "volumeMounts": [{"name": "config", "mountPath": "/etc/web"}],
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    }
                    for name in ("web", "sidecar")
                ],
            },
        },
    },
    "status": {
        "observedGeneration": 4,
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "conditions": [
            {
                "type": t,
                "status": "True",
                "lastUpdateTime": "2026-01-10T08:01:00Z",
                "lastTransitionTime": "2026-01-10T08:00:30Z",
                "reason": "NewReplicaSetAvailable",
                "message": "ReplicaSet web-7d4b9c has successfully progressed.",
            }
            for t in ("Available", "Progressing")
        ],
    },
}


def import_once(code: str) -> tuple[float, int, int]:
    """Seconds to run `code`, type modules it loaded, and the interpreter's peak RSS in KiB."""
    out = subprocess.run(
        [sys.executable, "-c", _PRELUDE + code + _REPORT], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])


def per_call(action: Callable[[], object], repeats: int) -> float:
    """Microseconds per call: the best of 5 rounds of `repeats` calls."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeats):
            action()
        best = min(best, time.perf_counter() - start)
    return best / repeats * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    import pyop.api.k8s

    print(f"pyop.api.k8s: Kubernetes {pyop.api.k8s.KUBERNETES_VERSION} models; {args.runs} interleaved runs each")
    # Warm the .pyc files once so every timed run reads compiled modules, as an installed package does.
    for code in VARIANTS.values():
        import_once(code)
    samples: dict[str, list[float]] = {label: [] for label in VARIANTS}
    modules: dict[str, int] = {}
    rss: dict[str, list[int]] = {label: [] for label in VARIANTS}
    for _ in range(args.runs):
        for label, code in VARIANTS.items():
            elapsed, count, peak = import_once(code)
            samples[label].append(elapsed * 1000)
            modules[label] = count
            rss[label].append(peak)
    baseline = statistics.median(rss["nothing (baseline)"])
    print("\nimport time in a fresh interpreter (after pydantic and pyop.api), peak RSS above the baseline:")
    for label, values in samples.items():
        extra = (statistics.median(rss[label]) - baseline) / 1024
        print(
            f"  {label:<30} median {statistics.median(values):7.1f} ms  min {min(values):7.1f} ms"
            f"  {modules[label]:4d} type modules  +{extra:5.1f} MiB"
        )

    from pyop.api.k8s.apps.v1 import Deployment

    start = time.perf_counter()
    Deployment.model_validate(DEPLOYMENT)
    first = (time.perf_counter() - start) * 1e6
    model = Deployment.model_validate(DEPLOYMENT)
    assert model.to_dict() == DEPLOYMENT, "the benchmark object must round-trip"
    wire = json.dumps(DEPLOYMENT).encode()
    costs = {
        "model_validate(dict)": per_call(lambda: Deployment.model_validate(DEPLOYMENT), 2000),
        "dump back (to_dict: by_alias, exclude_none, json)": per_call(model.to_dict, 2000),
        "model_validate_json(bytes)": per_call(lambda: Deployment.model_validate_json(wire), 2000),
        "plain dict: copy.deepcopy": per_call(lambda: copy.deepcopy(DEPLOYMENT), 2000),
        "plain dict: json.loads(bytes)": per_call(lambda: json.loads(wire), 2000),
    }
    print(f"\nper Deployment ({len(wire)} bytes of JSON; first validation {first:.0f} us):")
    for label, cost in costs.items():
        print(f"  {label:<50} {cost:8.1f} us")
    ratio = (costs["model_validate(dict)"] + costs["dump back (to_dict: by_alias, exclude_none, json)"]) / costs[
        "plain dict: copy.deepcopy"
    ]
    print(f"  validate + dump vs deepcopy of the dict: x{ratio:.1f}")


if __name__ == "__main__":
    main()
