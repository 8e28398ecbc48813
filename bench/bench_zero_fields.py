"""What writing Go's always-encoded zero fields costs a built-in write: the decoder's two passes, with and without
the second.

Why: kube-apiserver's answers carry every field Go's encoder writes even when zero (`resources: {}`, `rules: null`);
the test server adds them after defaulting (`TypeDecoder.add_zero_fields`), a second walk over each written
object. Here one process decodes and defaults a Deployment both ways, alternating batches (A B, A B, ...) so a
machine getting busier weighs on both alike: a create (the whole object walked) and a status update (spec shared
with the stored object, which the walk skips).

Run: `python bench/bench_zero_fields.py [--pairs 7] [--batch 2000]`. Prints microseconds per decode each way and
their ratio; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from pyop.api.definitions import PINNED_KUBERNETES_VERSION
from pyop.testing.builtins import defaulting
from pyop.testing.builtins.decoding import decoder_for

DEFINITION = "io.k8s.api.apps.v1.Deployment"
CONTAINER = {"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "1"}]}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [CONTAINER]}},
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--batch", type=int, default=2000)
    args = parser.parse_args()
    decoder = decoder_for(PINNED_KUBERNETES_VERSION)

    def defaulted(obj: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
        decoded = decoder.decode_fields(obj, DEFINITION, old).obj
        return defaulting.apply_defaults("apps", "Deployment", decoded, old)

    stored = decoder.add_zero_fields(defaulted(DEPLOYMENT), DEFINITION)
    update = {**stored, "metadata": dict(stored["metadata"]), "status": {"replicas": 1, "readyReplicas": 1}}
    cases: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "create": (
            lambda: defaulted(DEPLOYMENT),
            lambda: decoder.add_zero_fields(defaulted(DEPLOYMENT), DEFINITION),
        ),
        "status update": (
            lambda: defaulted(update, stored),
            lambda: decoder.add_zero_fields(defaulted(update, stored), DEFINITION, stored),
        ),
    }
    for name, (without, with_zeros) in cases.items():
        spent = [0.0, 0.0]
        for _ in range(args.pairs):
            for side, run in enumerate((without, with_zeros)):
                start = time.process_time()
                for _ in range(args.batch):
                    run()
                spent[side] += time.process_time() - start
        per = [total / (args.pairs * args.batch) * 1e6 for total in spent]
        print(f"{name}: decode+default {per[0]:.1f} us, + zero fields {per[1]:.1f} us (x{per[1] / per[0]:.2f})")


if __name__ == "__main__":
    main()
