"""One rendered object -> one template file: the release's namespace, the chart's labels, its part's switch.

Only these edits are made, so with default values `helm template` renders what kustomize rendered, apart from what
the chart documents: every object carries the chart's labels (`helm.sh/chart`, `app.kubernetes.io/instance`,
`app.kubernetes.io/managed-by: Helm` in place of `kustomize`), CRDs carry `helm.sh/resource-policy: keep` while
`crd.keep` is true, and there is no Namespace object (Helm's `--namespace` and `--create-namespace` make it).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from typing import Any

from pyop_scaffold.chart import manager
from pyop_scaffold.chart.parts import CRD, Part, extra_switches
from pyop_scaffold.chart.yamltpl import NAMESPACE_TOKEN, Template, wrap

# Labels Helm sets from the release; kustomize's own value of managed-by is replaced.
HELM_LABELS = ("helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by")
KEEP_ANNOTATION = "helm.sh/resource-policy"
CERT_MANAGER_ANNOTATIONS = ("cert-manager.io/inject-ca-from",)


def template_for(
    obj: dict[str, Any], part: Part, *, chart: str, namespace: str, present: set[str]
) -> tuple[str, dict[str, Any]]:
    """The template text of `obj` and, for the manager Deployment, the `manager:` values it reads."""
    obj = copy.deepcopy(obj)
    tpl = Template()
    _substitute_namespace(obj, namespace)
    meta = obj.setdefault("metadata", {})
    _label(meta, tpl, chart)
    conditional: list[tuple[str, str, Any]] = []
    if part is CRD:
        conditional.append((".Values.crd.keep", KEEP_ANNOTATION, "keep"))
    if "certManager" in present:
        annotations = meta.get("annotations") or {}
        for key in CERT_MANAGER_ANNOTATIONS:
            if key in annotations:
                conditional.append((".Values.certManager.enable", key, annotations.pop(key)))
        if not annotations:
            meta.pop("annotations", None)
    _annotate(meta, tpl, conditional)
    values: dict[str, Any] = {}
    if manager.is_manager(obj):
        values = manager.templatize_manager(obj, tpl, webhooks="webhook" in present)
    return wrap(part.condition(extra_switches(obj, present)), tpl.render(obj)), values


def _label(meta: dict[str, Any], tpl: Template, chart: str) -> None:
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in HELM_LABELS}
    token = tpl.block([f'{{{{- include "{chart}.labels" . | nindent {{indent}} }}}}'])
    if "labels" in meta:
        meta["labels"] = {token: None, **labels}
    else:
        _insert_after_name(meta, "labels", {token: None})


def _annotate(meta: dict[str, Any], tpl: Template, conditional: Iterable[tuple[str, str, Any]]) -> None:
    """Annotations under a condition; the whole `annotations:` key is conditional when nothing else is in it."""
    entries = list(conditional)
    if not entries:
        return
    annotations = meta.get("annotations") or {}
    if annotations:
        for condition, key, value in entries:
            annotations[tpl.block([f"{{{{- if {condition} }}}}", f"{key}: {_scalar(value)}", "{{- end }}"])] = None
        meta["annotations"] = annotations
        return
    meta.pop("annotations", None)
    if len(entries) == 1:
        condition, key, value = entries[0]
        lines = [f"{{{{- if {condition} }}}}", "annotations:", f"  {key}: {_scalar(value)}", "{{- end }}"]
    else:  # several: the key once, if any of them is on
        conditions = " ".join(f"({c})" for c, _, _ in entries)
        lines = [f"{{{{- if or {conditions} }}}}", "annotations:"]
        for condition, key, value in entries:
            lines += [f"  {{{{- if {condition} }}}}", f"  {key}: {_scalar(value)}", "  {{- end }}"]
        lines.append("{{- end }}")
    _insert_after_name(meta, tpl.block(lines), None)


def _insert_after_name(meta: dict[str, Any], new_key: str, new_value: Any) -> None:
    items = list(meta.items())
    meta.clear()
    for key, value in items:
        meta[key] = value
        if key == "name":
            meta[new_key] = new_value
    if new_key not in meta:
        meta[new_key] = new_value


def _scalar(value: Any) -> str:
    import json

    return json.dumps(value) if isinstance(value, str) else str(value)


def _substitute_namespace(obj: dict[str, Any], namespace: str) -> None:
    """Every mention of kustomize's namespace becomes the release's; a CRD only in its metadata and conversion
    (its schema's descriptions are the user's prose)."""
    pattern = re.compile(rf"(?<![A-Za-z0-9-]){re.escape(namespace)}(?![A-Za-z0-9-])")
    if obj.get("kind") == "CustomResourceDefinition":
        obj["metadata"] = _replace(obj.get("metadata") or {}, pattern)
        spec = obj.get("spec") or {}
        if "conversion" in spec:
            spec["conversion"] = _replace(spec["conversion"], pattern)
        return
    for key in list(obj):
        obj[key] = _replace(obj[key], pattern)


def _replace(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(NAMESPACE_TOKEN, value)
    if isinstance(value, dict):
        return {k: _replace(v, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, pattern) for v in value]
    return value
