"""How fast built-in schemas are: loading Kubernetes' definitions, expanding PodTemplateSpec, handing out copies.

Run: python bench/bench_builtin_schemas.py
The CRD generator embeds PodTemplateSpec in many kinds; after the first expansion each one should cost a copy.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import yaml

from pyop_scaffold.manifests import builtin
from pyop_scaffold.manifests.builtin import PINNED_KUBERNETES_VERSION, builtin_definitions, builtin_schema
from pyop_scaffold.manifests.builtin.source import load_definitions

POD_TEMPLATE = "io.k8s.api.core.v1.PodTemplateSpec"
KINDS_EMBEDDING_IT = 20
REPEATS = 7


def timed(action: Callable[[], object], *, before: Callable[[], None] = lambda: None) -> list[float]:
    """Wall-clock seconds of `action`, REPEATS times, each after `before` (which is not timed)."""
    samples = []
    for _ in range(REPEATS):
        before()
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return samples


def report(label: str, samples: list[float], *, per: int = 1) -> None:
    ms = [sample * 1000 / per for sample in samples]
    print(f"{label:<58} median {statistics.median(ms):8.2f} ms   min {min(ms):8.2f} ms")


def clear_caches() -> None:
    load_definitions.cache_clear()
    builtin._frozen_schema.cache_clear()
    builtin._definition_names.cache_clear()
    builtin._upstream_field_markers.cache_clear()


def main() -> None:
    print(f"Kubernetes definitions {PINNED_KUBERNETES_VERSION} from kubernetes-validate, {REPEATS} runs each")
    cold_import = [
        float(
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import time; s = time.perf_counter(); import pyop_scaffold.manifests.builtin; "
                    "print(time.perf_counter() - s)",
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for _ in range(3)
    ]
    report("import pyop_scaffold.manifests.builtin (fresh interpreter)", cold_import)
    report(
        "load _definitions.json (parse once per process)",
        timed(lambda: load_definitions(PINNED_KUBERNETES_VERSION), before=clear_caches),
    )

    def warm_definitions_only() -> None:
        clear_caches()
        load_definitions(PINNED_KUBERNETES_VERSION)

    report(
        "first PodTemplateSpec schema (expand + cache)",
        timed(lambda: builtin_schema(POD_TEMPLATE), before=warm_definitions_only),
    )
    builtin_schema(POD_TEMPLATE)
    report(
        f"cached PodTemplateSpec schema, per kind ({KINDS_EMBEDDING_IT} kinds)",
        timed(lambda: [builtin_schema(POD_TEMPLATE) for _ in range(KINDS_EMBEDDING_IT)]),
        per=KINDS_EMBEDDING_IT,
    )
    report(
        f"{KINDS_EMBEDDING_IT} kinds from a cold start (load + expand + copies)",
        timed(lambda: [builtin_schema(POD_TEMPLATE) for _ in range(KINDS_EMBEDDING_IT)], before=clear_caches),
    )
    names = sorted(builtin_definitions(PINNED_KUBERNETES_VERSION))
    report(
        f"every definition ({len(names)}), cold, without descriptions",
        timed(lambda: [builtin_schema(name, descriptions=False) for name in names], before=clear_caches),
    )
    with_docs = builtin_schema(POD_TEMPLATE)
    without_docs = builtin_schema(POD_TEMPLATE, descriptions=False)
    for label, schema in (("with descriptions", with_docs), ("without descriptions", without_docs)):
        compact = len(json.dumps(schema, separators=(",", ":")).encode())
        as_yaml = len(yaml.safe_dump(schema, sort_keys=False).encode())
        print(f"PodTemplateSpec schema size, {label:<22} JSON {compact:>8,} B   YAML {as_yaml:>8,} B")


if __name__ == "__main__":
    main()
