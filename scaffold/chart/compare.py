"""Does the chart still render what the kustomize installer renders? `helm template` and `kubectl kustomize
config/default` compared as parsed objects, minus the differences the chart documents (docs/shipping.md):

- every object carries Helm's labels (`helm.sh/chart`, `app.kubernetes.io/instance`, and
  `app.kubernetes.io/managed-by: Helm` where kustomize says `kustomize`);
- CRDs carry `helm.sh/resource-policy: keep` (while `crd.keep` is true);
- there is no Namespace object: `helm install --namespace N --create-namespace` makes it.

Run in a project (its CI's test-chart workflow does): `python -m pyop_scaffold.chart.compare`; exit code 1 names the
objects that differ. Helm and kubectl come from $HELM and $KUBECTL, else PATH.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

HELM_LABELS = ("helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by")
KEEP_ANNOTATION = "helm.sh/resource-policy"

Key = tuple[str, str, str, str]
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def key(obj: dict[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return (str(obj.get("apiVersion")), str(obj.get("kind")), str(meta.get("namespace", "")), str(meta.get("name")))


def normalise(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` without the documented differences (the labels Helm sets, the keep policy)."""
    obj = copy.deepcopy(obj)
    meta = obj.get("metadata") or {}
    for field, dropped in (("labels", HELM_LABELS), ("annotations", (KEEP_ANNOTATION,))):
        kept = {k: v for k, v in (meta.get(field) or {}).items() if k not in dropped}
        meta.pop(field, None)
        if kept:
            meta[field] = kept
    return obj


def by_key(objects: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    """Objects by apiVersion, kind, namespace and name, normalised; an object rendered twice is an error."""
    result: dict[Key, dict[str, Any]] = {}
    for obj in objects:
        if key(obj) in result:
            raise ValueError(f"{'/'.join(key(obj))} is rendered twice")
        result[key(obj)] = normalise(obj)
    return result


def kustomize_side(objects: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    """kustomize's objects as the chart renders them: without the Namespace."""
    return by_key([o for o in objects if not (o.get("kind") == "Namespace" and o.get("apiVersion") == "v1")])


def differences(kustomized: list[dict[str, Any]], templated: list[dict[str, Any]]) -> list[str]:
    """One entry per object missing, extra or different (with a diff); empty when they agree."""
    expected, rendered = kustomize_side(kustomized), by_key(templated)
    found = [f"only in kubectl kustomize: {'/'.join(k)}" for k in sorted(set(expected) - set(rendered))]
    found += [f"only in helm template: {'/'.join(k)}" for k in sorted(set(rendered) - set(expected))]
    for k in sorted(set(expected) & set(rendered)):
        if expected[k] != rendered[k]:
            diff = difflib.unified_diff(
                yaml.safe_dump(expected[k]).splitlines(),
                yaml.safe_dump(rendered[k]).splitlines(),
                "kubectl kustomize",
                "helm template",
                lineterm="",
            )
            found.append(f"differs: {'/'.join(k)}\n" + "\n".join(diff))
    return found


def _load(command: list[str]) -> list[dict[str, Any]]:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {result.stderr.strip()}")
    return [d for d in yaml.load_all(result.stdout, Loader=_LOADER) if isinstance(d, dict)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyop_scaffold.chart.compare", description=__doc__.split("\n")[0])
    parser.add_argument("--chart", default="dist/chart")
    parser.add_argument("--kustomize-dir", default="config/default")
    args = parser.parse_args(argv)
    config = yaml.safe_load((Path(args.kustomize_dir) / "kustomization.yaml").read_text(encoding="utf-8"))
    namespace = str(config.get("namespace", "default"))
    helm, kubectl = os.environ.get("HELM", "helm"), os.environ.get("KUBECTL", "kubectl")
    kustomized = _load([kubectl, "kustomize", args.kustomize_dir])
    templated = _load([helm, "template", "release", args.chart, "--namespace", namespace])
    found = differences(kustomized, templated)
    for entry in found:
        print(entry)
    if not found:
        print(f"{args.chart} renders the {len(templated)} objects of {args.kustomize_dir} (namespace {namespace})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
