"""A pod's `ephemeralcontainers` and `resize` subresources, as kube-apiserver's pod registry serves them
(pkg/registry/core/pod/strategy.go: podEphemeralContainersStrategy, podResizeStrategy; their validation is
pkg/apis/core/validation's ValidatePodEphemeralContainersUpdate and ValidatePodResize).

Both are updates of the Pod that keep a few fields of the request and reset everything else from the stored pod
(status, labels, annotations, finalizers and owner references included, as `ResetObjectMetaForStatus` does):

- `ephemeralcontainers` (what `kubectl debug` patches): only `spec.ephemeralContainers`. Existing ephemeral
  containers may not be changed or removed; names are unique across every container of the pod; a target container
  must be one of the pod's containers or init containers; the fields an ephemeral container may not have (ports,
  probes, lifecycle, resources, resizePolicy, restartPolicy) and volume-mount subPaths are refused with kube's
  field paths. They get the container defaults (imagePullPolicy, terminationMessagePath/Policy) as every write does.
- `resize` (in-place resize, on by default since 1.33): only the containers' (and init containers') `resources`
  and `resizePolicy`; then only cpu and memory may have changed, requests and limits cannot be removed, a memory
  limit cannot be lowered or added unless the memory resizePolicy is RestartContainer, the QoS class cannot change,
  and pods with pod-level resources, static pods and Windows pods cannot be resized.

kube prints a `cmp.Diff` after "may not be changed"; that diff is Go's and is not reproduced here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from pyop.api.quantity import QuantityError, parse_quantity
from pyop.api.status import StatusCause
from pyop.api.validation import dns1123_label_problems
from pyop.apiserver.registry.patch import clone_json
from pyop.apiserver.registry.strategy import RegistryContext
from pyop.testing.builtins.defaulting import qos_class

MIRROR_ANNOTATION: Final = "kubernetes.io/config.mirror"
EPHEMERAL_PATH: Final = "spec.ephemeralContainers"
# EphemeralContainerCommon's fields kube's allowedEphemeralContainerFields does not allow (their JSON names).
_NOT_FOR_EPHEMERAL: Final = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
_NOT_FOR_EPHEMERAL_TEXT: Final = "cannot be set for an Ephemeral Container"
_SIDECAR_TEXT: Final = "only cpu and memory resources for sidecar containers are mutable"
_RESET_METADATA: Final = ("labels", "annotations", "finalizers", "ownerReferences")


def _forbidden(path: str, detail: str) -> StatusCause:
    return StatusCause("FieldValueForbidden", f"Forbidden: {detail}", path)


def _reset_to_old(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """``old`` with a new top level and metadata whose request-settable parts are the old ones
    (metav1.ResetObjectMetaForStatus); the request's resourceVersion was checked already."""
    result = dict(old)
    metadata = dict(new.get("metadata") or {})
    for key in _RESET_METADATA:
        if key in old["metadata"]:
            metadata[key] = old["metadata"][key]
        else:
            metadata.pop(key, None)
    result["metadata"] = metadata
    return result


def _set(value: Any) -> bool:
    """Go's non-zero value: an absent field, null, "", false, 0-length list or an empty struct are unset."""
    if isinstance(value, dict):
        return any(_set(child) for child in value.values())
    if isinstance(value, (list, str)):
        return bool(value)
    return value is not None and value is not False


# --- ephemeralcontainers --------------------------------------------------------------------------------------


class EphemeralContainersStrategy:
    """podEphemeralContainersStrategy: the update keeps `spec.ephemeralContainers` only."""

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> dict[str, Any]:
        result = _reset_to_old(new, old)
        spec = dict(old.get("spec") or {})
        ephemeral = (new.get("spec") or {}).get("ephemeralContainers")
        if ephemeral:
            spec["ephemeralContainers"] = ephemeral
        else:
            spec.pop("ephemeralContainers", None)
        result["spec"] = spec
        return result

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[StatusCause]:
        if MIRROR_ANNOTATION in (old["metadata"].get("annotations") or {}):
            return [_forbidden("", "static pods do not support ephemeral containers")]
        causes = list(_ephemeral_containers(new.get("spec") or {}))
        by_name = {c.get("name"): c for c in (new.get("spec") or {}).get("ephemeralContainers") or []}
        for existing in (old.get("spec") or {}).get("ephemeralContainers") or []:
            name = existing.get("name")
            if name not in by_name:
                causes.append(
                    _forbidden(EPHEMERAL_PATH, f"existing ephemeral containers {json.dumps(name)} may not be removed\n")
                )
            elif by_name[name] != existing:
                causes.append(
                    _forbidden(EPHEMERAL_PATH, f"existing ephemeral containers {json.dumps(name)} may not be changed\n")
                )
        return causes


def _ephemeral_containers(spec: dict[str, Any]) -> Iterator[StatusCause]:
    """validateEphemeralContainers: names, targets and the fields an ephemeral container may not set."""
    others = [c.get("name") for key in ("containers", "initContainers") for c in spec.get(key) or []]
    seen = set(others)
    for index, container in enumerate(spec.get("ephemeralContainers") or []):
        where = f"{EPHEMERAL_PATH}[{index}]"
        name = str(container.get("name") or "")
        if not name:
            yield StatusCause("FieldValueRequired", "Required value", f"{where}.name")
        else:
            for problem in dns1123_label_problems(name):
                yield StatusCause("FieldValueInvalid", f"Invalid value: {json.dumps(name)}: {problem}", f"{where}.name")
            if name in seen:
                yield StatusCause("FieldValueDuplicate", f"Duplicate value: {json.dumps(name)}", f"{where}.name")
            seen.add(name)
        target = container.get("targetContainerName")
        if target and target not in others:
            yield StatusCause("FieldValueNotFound", f"Not found: {json.dumps(target)}", f"{where}.targetContainerName")
        for field in _NOT_FOR_EPHEMERAL:
            if _set(container.get(field)):
                yield _forbidden(f"{where}.{field}", _NOT_FOR_EPHEMERAL_TEXT)
        for mount_index, mount in enumerate(container.get("volumeMounts") or []):
            for field in ("subPath", "subPathExpr"):
                if mount.get(field):
                    yield _forbidden(f"{where}.volumeMounts[{mount_index}].{field}", _NOT_FOR_EPHEMERAL_TEXT)


# --- resize ---------------------------------------------------------------------------------------------------


class ResizeStrategy:
    """podResizeStrategy: the update keeps the containers' `resources` and `resizePolicy` only."""

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> dict[str, Any]:
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        merged: dict[str, Any] = {}
        for key in ("containers", "initContainers"):
            containers = _resize_only(new_spec.get(key) or [], old_spec.get(key) or [])
            if containers is None:
                return new  # containers added, removed or renamed: validation refuses it (dropNonResizeUpdates)
            if key in old_spec:
                merged[key] = containers
        result = _reset_to_old(new, old)
        result["spec"] = {**old_spec, **merged}
        return result

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[StatusCause]:
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        if _pod_level_resources(old_spec) or _pod_level_resources(new_spec):
            return [_forbidden("", "pods with pod-level resources cannot be resized")]
        if MIRROR_ANNOTATION in (old["metadata"].get("annotations") or {}):
            return [_forbidden("", "static pods cannot be resized")]
        if ((old_spec.get("os") or {}).get("name")) == "windows":
            return [_forbidden("", "windows pods cannot be resized")]
        old_containers, new_containers = old_spec.get("containers") or [], new_spec.get("containers") or []
        old_init, new_init = old_spec.get("initContainers") or [], new_spec.get("initContainers") or []
        if [c.get("name") for c in old_containers] != [c.get("name") for c in new_containers] or [
            c.get("name") for c in old_init
        ] != [c.get("name") for c in new_init]:
            return [_forbidden("spec", "only cpu and memory resources are mutable")]
        causes: list[StatusCause] = []
        old_qos = (old.get("status") or {}).get("qosClass") or qos_class(old_spec)
        if old_qos != qos_class(new_spec):
            shown = json.dumps((new.get("status") or {}).get("qosClass") or "")
            causes.append(
                StatusCause(
                    "FieldValueInvalid",
                    f"Invalid value: {shown}: Pod QOS Class may not change as a result of resizing",
                    "spec",
                )
            )
        if not _resize_supported(old):
            causes.append(_forbidden("spec", "Pod running on node without support for resize"))
        for index, container in enumerate(old_init):
            if container.get("restartPolicy") == "Always":
                causes.extend(_container_resize(new_init[index], container, f"spec.initContainers[{index}].resources"))
        for index, container in enumerate(old_containers):
            causes.extend(_container_resize(new_containers[index], container, f"spec.containers[{index}].resources"))
        for index, container in enumerate(new_containers):
            if _without_cpu_memory(container, old_containers[index]) != old_containers[index]:
                causes.append(_forbidden("spec", "only cpu and memory resources are mutable"))
        for index, container in enumerate(new_init):
            if container.get("restartPolicy") == "Always":
                if _without_cpu_memory(container, old_init[index]) != old_init[index]:
                    causes.append(_forbidden("spec", _SIDECAR_TEXT))
            elif container != old_init[index]:
                causes.append(_forbidden("spec", "resources for non-sidecar init containers are immutable"))
        return causes


def _resize_only(new: list[dict[str, Any]], old: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    if len(new) != len(old):
        return None
    merged = []
    for new_container, old_container in zip(new, old, strict=True):
        if new_container.get("name") != old_container.get("name"):
            return None
        container = {k: v for k, v in old_container.items() if k not in ("resources", "resizePolicy")}
        for key in ("resources", "resizePolicy"):
            if key in new_container:
                container[key] = new_container[key]
        merged.append(container)
    return merged


def _pod_level_resources(spec: dict[str, Any]) -> bool:
    resources = spec.get("resources") or {}
    return bool(resources.get("requests") or resources.get("limits"))


def _resize_supported(pod: dict[str, Any]) -> bool:
    """isPodResizeRequestSupported: a running container reported without `resources` runs on a node without it."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if (status.get("state") or {}).get("running") is not None:
            return status.get("resources") is not None
    return True


def _container_resize(new: dict[str, Any], old: dict[str, Any], path: str) -> Iterator[StatusCause]:
    """validateContainerResize: nothing removed; memory limits only lowered or added with RestartContainer."""
    new_resources, old_resources = new.get("resources") or {}, old.get("resources") or {}
    for key, what in (("requests", "resource requests"), ("limits", "resource limits")):
        if set(old_resources.get(key) or {}) - set(new_resources.get(key) or {}):
            yield _forbidden(f"{path}.{key}", f"{what} cannot be removed")
    policy = next(
        (p.get("restartPolicy") or "" for p in new.get("resizePolicy") or [] if p.get("resourceName") == "memory"), ""
    )
    if policy not in ("", "NotRequired"):
        return
    new_limit = (new_resources.get("limits") or {}).get("memory")
    old_limit = (old_resources.get("limits") or {}).get("memory")
    where = f"{path}.limits[memory]"
    if new_limit is not None and old_limit is not None:
        if _value(new_limit) < _value(old_limit):
            yield _forbidden(where, "memory limits cannot be decreased unless resizePolicy is RestartContainer")
    elif new_limit is not None:
        yield _forbidden(where, "memory limits cannot be added unless resizePolicy is RestartContainer")


def _value(quantity: Any) -> Any:
    try:
        return parse_quantity(quantity).value
    except (QuantityError, TypeError):
        return 0


def _without_cpu_memory(container: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """dropCPUMemoryResourcesFromContainer: the container with its cpu and memory as they were."""
    copy = clone_json(container)
    new_resources, old_resources = container.get("resources") or {}, old.get("resources") or {}
    resources: dict[str, Any] = {}
    for key in ("limits", "requests"):
        if key not in old_resources:
            continue
        merged = {k: v for k, v in (new_resources.get(key) or {}).items() if k not in ("cpu", "memory")}
        merged.update({k: v for k, v in old_resources[key].items() if k in ("cpu", "memory")})
        resources[key] = merged
    if resources or "resources" in old:
        copy["resources"] = resources
    else:
        copy.pop("resources", None)
    return copy


__all__ = ["EphemeralContainersStrategy", "ResizeStrategy"]
