"""Comparing `helm template` with `kubectl kustomize` as parsed objects, minus the differences the chart documents
(docs/shipping.md): Helm's labels on every object, the keep policy on CRDs, no Namespace object."""

from __future__ import annotations

import copy
from typing import Any

HELM_LABELS = ("helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by")
KEEP = "helm.sh/resource-policy"

Key = tuple[str, str, str, str]


def key(obj: dict[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return (str(obj["apiVersion"]), str(obj["kind"]), str(meta.get("namespace", "")), str(meta["name"]))


def normalise(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` without the documented differences."""
    obj = copy.deepcopy(obj)
    meta = obj.get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in HELM_LABELS}
    meta.pop("labels", None)
    if labels:
        meta["labels"] = labels
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != KEEP}
    meta.pop("annotations", None)
    if annotations:
        meta["annotations"] = annotations
    return obj


def by_key(objects: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    result: dict[Key, dict[str, Any]] = {}
    for obj in objects:
        assert key(obj) not in result, f"{key(obj)} rendered twice"
        result[key(obj)] = normalise(obj)
    return result


def kustomize_side(objects: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    """kustomize's objects as the chart renders them: without the Namespace (Helm's --create-namespace)."""
    return by_key([o for o in objects if not (o["kind"] == "Namespace" and o["apiVersion"] == "v1")])
