"""HorizontalPodAutoscaler across autoscaling/v1 and v2, as kube-apiserver converts it (pkg/apis/autoscaling/v1
conversion.go), so the test server serves both versions of one stored object (stored in v2, kube's storage version).

- v1's `targetCPUUtilizationPercentage` is v2's Resource metric `cpu` with an `Utilization` target (the last of
  the metrics); v2's other metrics travel in v1 in the annotation `autoscaling.alpha.kubernetes.io/metrics`, in v1's
  own MetricSpec form (`targetAverageUtilization`, `targetAverageValue`, `metricName`, ...), and come back from it;
  `behavior` in `autoscaling.alpha.kubernetes.io/behavior`.
- A v1 object with neither is given v2's default, cpu at 80% utilization, which v1 then shows as
  `targetCPUUtilizationPercentage: 80` (kube applies it when it decodes the stored v2 object).
- Status: v1's `currentCPUUtilizationPercentage` is the cpu Resource metric's `averageUtilization`; conditions and
  the other current metrics travel in `autoscaling.alpha.kubernetes.io/conditions` and `.../current-metrics`.
"""

from __future__ import annotations

import copy
import json
from typing import Any, ClassVar, Final

METRICS: Final = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS: Final = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS: Final = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR: Final = "autoscaling.alpha.kubernetes.io/behavior"
DEFAULT_CPU_UTILIZATION: Final = 80
V1: Final = "autoscaling/v1"
V2: Final = "autoscaling/v2"


def _drop_none(value: dict[str, Any]) -> dict[str, Any]:
    return {key: item for key, item in value.items() if item is not None}


def _cpu_metric(utilization: int) -> dict[str, Any]:
    return {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}},
    }


# --- metric specs: v2 <-> v1's annotation form -------------------------------------------------------------


def _v1_target(target: dict[str, Any], utilization: str, average: str, value: str | None = None) -> dict[str, Any]:
    out = {utilization: target.get("averageUtilization"), average: target.get("averageValue")}
    if value is not None:
        out[value] = target.get("value")
    return out


def metric_to_v1(metric: dict[str, Any]) -> dict[str, Any]:
    kind = metric.get("type")
    if kind == "Resource":
        source = metric.get("resource") or {}
        target = source.get("target") or {}
        body = {"name": source.get("name"), **_v1_target(target, "targetAverageUtilization", "targetAverageValue")}
        return {"type": kind, "resource": _drop_none(body)}
    if kind == "ContainerResource":
        source = metric.get("containerResource") or {}
        target = source.get("target") or {}
        body = {
            "name": source.get("name"),
            "container": source.get("container"),
            **_v1_target(target, "targetAverageUtilization", "targetAverageValue"),
        }
        return {"type": kind, "containerResource": _drop_none(body)}
    if kind == "Pods":
        source = metric.get("pods") or {}
        identifier = source.get("metric") or {}
        body = {
            "metricName": identifier.get("name"),
            "selector": identifier.get("selector"),
            "targetAverageValue": (source.get("target") or {}).get("averageValue"),
        }
        return {"type": kind, "pods": _drop_none(body)}
    if kind == "Object":
        source = metric.get("object") or {}
        identifier, target = source.get("metric") or {}, source.get("target") or {}
        body = {
            "target": source.get("describedObject"),
            "metricName": identifier.get("name"),
            "selector": identifier.get("selector"),
            "targetValue": target.get("value"),
            "averageValue": target.get("averageValue"),
        }
        return {"type": kind, "object": _drop_none(body)}
    if kind == "External":
        source = metric.get("external") or {}
        identifier, target = source.get("metric") or {}, source.get("target") or {}
        body = {
            "metricName": identifier.get("name"),
            "metricSelector": identifier.get("selector"),
            "targetValue": target.get("value"),
            "targetAverageValue": target.get("averageValue"),
        }
        return {"type": kind, "external": _drop_none(body)}
    return copy.deepcopy(metric)


def _v2_target(utilization: Any, average: Any, value: Any = None) -> dict[str, Any]:
    if utilization is not None:
        return {"type": "Utilization", "averageUtilization": utilization}
    if average is not None:
        return {"type": "AverageValue", "averageValue": average}
    return {"type": "Value", "value": value}


def metric_to_v2(metric: dict[str, Any]) -> dict[str, Any]:
    kind = metric.get("type")
    if kind == "Resource":
        source = metric.get("resource") or {}
        target = _v2_target(source.get("targetAverageUtilization"), source.get("targetAverageValue"))
        return {"type": kind, "resource": {"name": source.get("name"), "target": target}}
    if kind == "ContainerResource":
        source = metric.get("containerResource") or {}
        target = _v2_target(source.get("targetAverageUtilization"), source.get("targetAverageValue"))
        body = {"name": source.get("name"), "container": source.get("container"), "target": target}
        return {"type": kind, "containerResource": body}
    if kind == "Pods":
        source = metric.get("pods") or {}
        identifier = _drop_none({"name": source.get("metricName"), "selector": source.get("selector")})
        target = {"type": "AverageValue", "averageValue": source.get("targetAverageValue")}
        return {"type": kind, "pods": {"metric": identifier, "target": target}}
    if kind == "Object":
        source = metric.get("object") or {}
        identifier = _drop_none({"name": source.get("metricName"), "selector": source.get("selector")})
        target = _v2_target(None, source.get("averageValue"), source.get("targetValue"))
        return {
            "type": kind,
            "object": {"describedObject": source.get("target"), "metric": identifier, "target": target},
        }
    if kind == "External":
        source = metric.get("external") or {}
        identifier = _drop_none({"name": source.get("metricName"), "selector": source.get("metricSelector")})
        target = _v2_target(None, source.get("targetAverageValue"), source.get("targetValue"))
        return {"type": kind, "external": {"metric": identifier, "target": target}}
    return copy.deepcopy(metric)


def _is_cpu_utilization(metric: dict[str, Any]) -> bool:
    resource = metric.get("resource") or {}
    target = resource.get("target") or {}
    return (
        metric.get("type") == "Resource"
        and resource.get("name") == "cpu"
        and target.get("averageUtilization") is not None
    )


def _current_to_v1(status: dict[str, Any]) -> dict[str, Any]:
    kind = status.get("type")
    if kind == "Resource":
        source = status.get("resource") or {}
        current = source.get("current") or {}
        body = {
            "name": source.get("name"),
            "currentAverageUtilization": current.get("averageUtilization"),
            "currentAverageValue": current.get("averageValue"),
        }
        return {"type": kind, "resource": _drop_none(body)}
    return copy.deepcopy(status)


def _current_to_v2(status: dict[str, Any]) -> dict[str, Any]:
    kind = status.get("type")
    if kind == "Resource":
        source = status.get("resource") or {}
        current = _drop_none(
            {
                "averageUtilization": source.get("currentAverageUtilization"),
                "averageValue": source.get("currentAverageValue"),
            }
        )
        return {"type": kind, "resource": {"name": source.get("name"), "current": current}}
    return copy.deepcopy(status)


# --- whole objects ----------------------------------------------------------------------------------------


def to_v1(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["apiVersion"] = V1
    spec = out.get("spec") or {}
    metrics = spec.pop("metrics", None) or []
    others = []
    for metric in metrics:
        if _is_cpu_utilization(metric):
            spec["targetCPUUtilizationPercentage"] = metric["resource"]["target"]["averageUtilization"]
        else:
            others.append(metric_to_v1(metric))
    annotations = dict((out.get("metadata") or {}).get("annotations") or {})
    if others:
        annotations[METRICS] = json.dumps(others, separators=(",", ":"))
    behavior = spec.pop("behavior", None)
    if behavior is not None:
        annotations[BEHAVIOR] = json.dumps(behavior, separators=(",", ":"))
    status = out.get("status")
    if isinstance(status, dict):
        current = status.pop("currentMetrics", None) or []
        other_current = []
        for metric in current:
            resource = metric.get("resource") or {}
            utilization = (resource.get("current") or {}).get("averageUtilization")
            if metric.get("type") == "Resource" and resource.get("name") == "cpu" and utilization is not None:
                status["currentCPUUtilizationPercentage"] = utilization
            else:
                other_current.append(_current_to_v1(metric))
        if other_current:
            annotations[CURRENT_METRICS] = json.dumps(other_current, separators=(",", ":"))
        conditions = status.pop("conditions", None)
        if conditions:
            annotations[CONDITIONS] = json.dumps(conditions, separators=(",", ":"))
    if annotations:
        out.setdefault("metadata", {})["annotations"] = annotations
    return out


def to_v2(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["apiVersion"] = V2
    spec = out.setdefault("spec", {})
    metadata = out.setdefault("metadata", {})
    annotations = dict(metadata.get("annotations") or {})
    metrics = [metric_to_v2(m) for m in _annotation(annotations.pop(METRICS, None))]
    cpu = spec.pop("targetCPUUtilizationPercentage", None)
    if cpu is not None:
        metrics.append(_cpu_metric(cpu))
    spec["metrics"] = metrics or [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
    behavior = annotations.pop(BEHAVIOR, None)
    if behavior:
        spec["behavior"] = json.loads(behavior)
    status = out.get("status")
    current_annotation = annotations.pop(CURRENT_METRICS, None)
    conditions_annotation = annotations.pop(CONDITIONS, None)
    if isinstance(status, dict):
        current = [_current_to_v2(m) for m in _annotation(current_annotation)]
        utilization = status.pop("currentCPUUtilizationPercentage", None)
        if utilization is not None:
            current.append(
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": utilization}}}
            )
        if current:
            status["currentMetrics"] = current
        conditions = _annotation(conditions_annotation)
        if conditions:
            status["conditions"] = conditions
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    return out


def _annotation(text: str | None) -> list[dict[str, Any]]:
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


class HPAConversion:
    """The `Converter` of both HorizontalPodAutoscaler versions (no call out: plain code, runs anywhere)."""

    calls_out: ClassVar[bool] = False

    def convert(self, obj: dict[str, Any], api_version: str) -> dict[str, Any]:
        if obj.get("apiVersion") == api_version:
            return obj
        return to_v1(obj) if api_version == V1 else to_v2(obj)

    async def convert_async(self, obj: dict[str, Any], api_version: str, caller: Any) -> dict[str, Any]:
        return self.convert(obj, api_version)


# --- defaulting (pkg/apis/autoscaling/v1 and v2 defaults.go) -------------------------------------------------

_SCALE_UP: Final = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
_SCALE_DOWN: Final = {
    "stabilizationWindowSeconds": 300,
    "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}


def default_hpa(obj: dict[str, Any]) -> None:
    """SetDefaults_HorizontalPodAutoscaler: `minReplicas: 1`; in v2 the cpu 80% metric when none is given (v1 gets
    it from the conversion) and a given `behavior`'s missing rules (GenerateHPAScaleUpRules/ScaleDownRules)."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("minReplicas", 1)
    if obj.get("apiVersion") != V2:
        return
    if not spec.get("metrics"):
        spec["metrics"] = [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        for field, rules in (("scaleUp", _SCALE_UP), ("scaleDown", _SCALE_DOWN)):
            current = behavior.get(field)
            if not isinstance(current, dict):
                behavior[field] = copy.deepcopy(rules)
                continue
            for key, value in rules.items():
                if current.get(key) is None:
                    current[key] = copy.deepcopy(value)


__all__ = ["HPAConversion", "default_hpa", "to_v1", "to_v2"]
