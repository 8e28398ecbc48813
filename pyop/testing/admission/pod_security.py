"""The PodSecurity admission plugin (k8s.io/pod-security-admission, plugin/pkg/admission/security/podsecurity).

A namespace chooses, by labels, the Pod Security Standard level (`privileged`, `baseline`, `restricted`) and
version (`latest`, `v1.N`) of each mode: `pod-security.kubernetes.io/enforce`, `warn`, `audit` and their
`-version`. Without labels every mode is `privileged:latest` (kube-apiserver's default configuration, which
exempts no user, runtime class or namespace; kube-system included). Without a warn label, warn follows a stricter
enforce level.
- **Pods** (creates, updates that change an image or the seccomp annotations, ephemeral containers): an enforce
  violation is 403, `pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation !=
  false (container "app" must set securityContext.allowPrivilegeEscalation=false), ...`; otherwise a warn
  violation is a `Warning` header, `would violate PodSecurity "baseline:latest": privileged (...)`.
- **Workloads** (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs, ReplicationControllers,
  PodTemplates): their pod template gets the warn mode's warning, never a refusal.
- **Namespaces**: labels that are not a level or version are 422 (`metadata.labels[pod-security.kubernetes.io/
  enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`); a change of the enforce
  level warns about the pods already there, `existing pods in namespace "x" violate the new PodSecurity enforce
  level "restricted:latest"` then `<pod> (and N other pods): <reasons>` per group of pods failing alike.
Audit mode's audit annotations are not modelled (the test server keeps no audit log).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from pyop.api.status import StatusCause, invalid
from pyop.apiserver.admission.plugins import CREATE, UPDATE, Attributes
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.storage.store import Store
from pyop.testing.admission import pod_security_checks as checks
from pyop.testing.admission.forbidden import admission_forbidden

PREFIX: Final = "pod-security.kubernetes.io/"
LEVELS: Final = ("privileged", "baseline", "restricted")
_VERSION: Final = re.compile(r"^v1\.(0|[1-9][0-9]*)$")
_TEMPLATES: Final = {
    ("apps", "deployments"): ("spec", "template"),
    ("apps", "replicasets"): ("spec", "template"),
    ("apps", "statefulsets"): ("spec", "template"),
    ("apps", "daemonsets"): ("spec", "template"),
    ("batch", "jobs"): ("spec", "template"),
    ("batch", "cronjobs"): ("spec", "jobTemplate", "spec", "template"),
    ("", "replicationcontrollers"): ("spec", "template"),
    ("", "podtemplates"): ("template",),
}
_PLURALS: Final = frozenset({"pods", "namespaces", *(plural for _, plural in _TEMPLATES)})
_SECCOMP_ANNOTATIONS: Final = (
    "seccomp.security.alpha.kubernetes.io/",
    "container.seccomp.security.alpha.kubernetes.io/",
)


class LevelVersion:
    __slots__ = ("level", "version", "text")

    def __init__(self, level: str, version: tuple[int, int], text: str) -> None:
        self.level, self.version, self.text = level, version, text

    def __str__(self) -> str:
        return f"{self.level}:{self.text}"

    def equivalent(self, other: LevelVersion) -> bool:
        both_privileged = self.level == other.level == "privileged"
        return both_privileged or (self.level == other.level and self.version == other.version)


def policy(labels: Mapping[str, Any] | None) -> tuple[dict[str, LevelVersion], list[StatusCause]]:
    """api.PolicyToEvaluate: each mode's level and version, and the label errors (bad levels fail closed)."""
    labels = labels or {}
    modes = {mode: LevelVersion("privileged", checks.LATEST, "latest") for mode in ("enforce", "warn", "audit")}
    errors: list[StatusCause] = []
    for mode in ("enforce", "audit", "warn"):
        key = f"{PREFIX}{mode}"
        if key in labels:
            value = str(labels[key])
            if value in LEVELS:
                modes[mode].level = value
            else:
                modes[mode].level = "restricted" if mode == "enforce" else "privileged"
                errors.append(_label_error(key, value, f"must be one of {', '.join(LEVELS)}"))
        version_key = f"{key}-version"
        if version_key in labels:
            value = str(labels[version_key])
            match = _VERSION.match(value)
            if value == "latest":
                pass
            elif match:
                modes[mode].version, modes[mode].text = (1, int(match.group(1))), value
            else:
                errors.append(_label_error(version_key, value, 'must be "latest" or "v1.x"'))
    enforce, warn = modes["enforce"], modes["warn"]
    enforce_set = f"{PREFIX}enforce" in labels and str(labels[f"{PREFIX}enforce"]) in LEVELS
    if f"{PREFIX}warn" not in labels and enforce_set and LEVELS.index(enforce.level) > LEVELS.index(warn.level):
        warn.level = enforce.level
        if f"{PREFIX}warn-version" not in labels:
            warn.version, warn.text = enforce.version, enforce.text
    return modes, errors


def _label_error(key: str, value: str, message: str) -> StatusCause:
    return StatusCause("FieldValueInvalid", f'Invalid value: "{value}": {message}', f"metadata.labels[{key}]")


def _failures(mode: LevelVersion, metadata: Mapping[str, Any], spec: Mapping[str, Any]) -> list[tuple[str, str]]:
    return checks.evaluate(mode.level, mode.version, metadata, spec)


class PodSecurity:
    name = "PodSecurity"
    last = False

    def may_handle(self, operation: str, resource_type: ResourceType, subresource: str) -> bool:
        if resource_type.plural not in _PLURALS or operation not in (CREATE, UPDATE):
            return False
        resource = (resource_type.group, resource_type.plural)
        if resource == ("", "namespaces"):
            return not subresource
        if resource == ("", "pods"):
            return subresource in ("", "ephemeralcontainers")
        return resource in _TEMPLATES and not subresource

    def handles(self, attributes: Attributes) -> bool:
        return self.may_handle(attributes.operation, attributes.resource_type, attributes.subresource)

    def validate(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None:
        resource = (attributes.resource_type.group, attributes.resource_type.plural)
        if resource == ("", "namespaces"):
            self._namespace(attributes, obj, store)
            return
        namespace = store.get("namespaces", "", attributes.namespace)
        modes, _ = policy(((namespace or {}).get("metadata") or {}).get("labels"))
        if resource == ("", "pods"):
            self._pod(attributes, obj, modes)
            return
        template = _template(obj, _TEMPLATES[resource])
        if template is None or modes["warn"].level == "privileged":
            return
        if attributes.operation == UPDATE and _template(attributes.old or {}, _TEMPLATES[resource]) == template:
            return
        failures = _failures(modes["warn"], template.get("metadata") or {}, template.get("spec") or {})
        if failures:
            attributes.warnings.append(
                f'would violate PodSecurity "{modes["warn"]}": {checks.forbidden_detail(failures)}'
            )

    def _pod(self, attributes: Attributes, pod: dict[str, Any], modes: dict[str, LevelVersion]) -> None:
        if attributes.operation == UPDATE and attributes.old is not None and not _significant(pod, attributes.old):
            return
        metadata, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        failures = _failures(modes["enforce"], metadata, spec)
        if failures:
            detail = checks.forbidden_detail(failures)
            raise admission_forbidden(attributes, pod, f'violates PodSecurity "{modes["enforce"]}": {detail}')
        failures = _failures(modes["warn"], metadata, spec)
        if failures:
            attributes.warnings.append(
                f'would violate PodSecurity "{modes["warn"]}": {checks.forbidden_detail(failures)}'
            )

    def _namespace(self, attributes: Attributes, namespace: dict[str, Any], store: Store) -> None:
        name = (namespace.get("metadata") or {}).get("name", attributes.name)
        modes, errors = policy((namespace.get("metadata") or {}).get("labels"))
        if errors:
            raise invalid("Namespace", "", name, errors)
        if attributes.operation != UPDATE or attributes.old is None:
            return
        old, _ = policy((attributes.old.get("metadata") or {}).get("labels"))
        enforce = modes["enforce"]
        if enforce.level == "privileged" or enforce.equivalent(old["enforce"]):
            return
        attributes.warnings.extend(_existing_pod_warnings(store, name, enforce))


def _existing_pod_warnings(store: Store, namespace: str, enforce: LevelVersion) -> list[str]:
    """EvaluatePodsInNamespace: pods failing the same way are one line, named by the first of them."""
    groups: dict[str, list[str]] = {}
    for pod in sorted(store.objects("pods", namespace), key=lambda p: p["metadata"]["name"]):
        failures = _failures(enforce, pod.get("metadata") or {}, pod.get("spec") or {})
        if failures:
            groups.setdefault(checks.forbidden_reason(failures), []).append(pod["metadata"]["name"])
    if not groups:
        return []
    warnings = [f'existing pods in namespace "{namespace}" violate the new PodSecurity enforce level "{enforce}"']
    for reason, pods in groups.items():
        others = len(pods) - 1
        named = pods[0] if not others else f"{pods[0]} (and {others} other {checks.pluralize('pod', 'pods', others)})"
        warnings.append(f"{named}: {reason}")
    return warnings


def _template(obj: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    node: Any = obj
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, dict) else None


def _significant(pod: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """isSignificantPodUpdate: only image changes, seccomp annotations and ephemeral containers are looked at."""

    def images(spec: Mapping[str, Any]) -> list[list[Any]]:
        return [[c.get("image") for c in spec.get(field) or ()] for field in ("containers", "initContainers")]

    def seccomp(obj: Mapping[str, Any]) -> dict[str, Any]:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        return {k: v for k, v in annotations.items() if k.startswith(_SECCOMP_ANNOTATIONS)}

    spec, old_spec = pod.get("spec") or {}, old.get("spec") or {}
    return (
        images(spec) != images(old_spec)
        or seccomp(pod) != seccomp(old)
        or spec.get("ephemeralContainers") != old_spec.get("ephemeralContainers")
    )


__all__ = ["PodSecurity", "policy"]
