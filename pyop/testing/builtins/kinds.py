"""Behaviour particular to some built-in kinds: defaults set on create, review APIs, CRD status.

Kept apart from the generic registry so ``operations.py`` reads like kube-apiserver's generic
store, with the per-kind strategy hooks here.
"""

from __future__ import annotations

import base64
from typing import Any

from pyop.api.status import ApiError, StatusCause, invalid
from pyop.apiserver.authentication.user import UserInfo as UserInfo  # moved there; re-exported for old imports
from pyop.apiserver.registry.resources import ResourceType, types_from_crd
from pyop.testing.builtins import defaulting
from pyop.testing.crds.conversion import conversion_causes
from pyop.testing.webhooks import config as webhook_config

CRD_STORAGE_KEY = "customresourcedefinitions.apiextensions.k8s.io"
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
NAMESPACE_FINALIZER = "kubernetes"


def prepare_for_create(resource_type: ResourceType, obj: dict[str, Any]) -> None:
    """Defaults a kind's registry strategy sets on create (status reset, phases, finalizers)."""
    key = resource_type.storage_key
    if resource_type.has_status and resource_type.custom:
        obj.pop("status", None)
    elif resource_type.has_status and key != CRD_STORAGE_KEY:
        # Built-in strategies reset status on create (`job.Status = batch.JobStatus{}`); an empty struct is
        # still encoded, so a new Deployment or Job reads back with `status: {}`.
        obj["status"] = {}
    if key == "namespaces":
        defaulting.namespace(obj)  # again: a generated name is known only now (the strategy's Canonicalize)
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        spec.setdefault("finalizers", [NAMESPACE_FINALIZER])
    elif key == "pods":
        obj["status"] = {"phase": "Pending"}
    elif key == "deployments.apps":
        obj["status"] = {}
        obj.setdefault("spec", {}).setdefault("replicas", 1)
    elif key == "services":
        obj["status"] = {"loadBalancer": {}}
        obj.setdefault("spec", {}).setdefault("type", "ClusterIP")
    elif key == "persistentvolumeclaims":
        obj["status"] = {"phase": "Pending"}  # SetDefaults_PersistentVolumeClaim
    elif key == "secrets":
        obj.setdefault("type", "Opaque")
    fold_secret_string_data(resource_type, obj)


def exempt_from_admission(resource_type: ResourceType) -> bool:
    """Webhook configurations are never sent to webhooks (a broken webhook could otherwise never be removed)."""
    return resource_type.storage_key in webhook_config.EXEMPT_KEYS


def prepare_webhook_configuration(resource_type: ResourceType, obj: dict[str, Any]) -> None:
    """Defaults and validation of Mutating/ValidatingWebhookConfiguration writes; other kinds pass."""
    if resource_type.storage_key in webhook_config.CONFIGURATION_KEYS:
        webhook_config.prepare(obj, mutating=resource_type.storage_key == webhook_config.MUTATING_KEY)


def fold_secret_string_data(resource_type: ResourceType, obj: dict[str, Any]) -> None:
    """``stringData`` is write-only: the API server merges it into ``data`` (base64)."""
    if resource_type.storage_key != "secrets" or "stringData" not in obj:
        return
    data = dict(obj.get("data") or {})
    for name, value in (obj.pop("stringData") or {}).items():
        data[name] = base64.b64encode(str(value).encode()).decode()
    obj["data"] = data
    obj.setdefault("type", "Opaque")


# --- CustomResourceDefinition ---------------------------------------------------------------------


def validate_crd(crd: dict[str, Any]) -> list[ResourceType]:
    """The checks the serving side depends on; full CRD validation is the manifest generator's job."""
    name = (crd.get("metadata") or {}).get("name", "")
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    causes = []
    for path, value in (
        ("spec.group", spec.get("group")),
        ("spec.names.plural", names.get("plural")),
        ("spec.names.kind", names.get("kind")),
    ):
        if not value:
            causes.append(StatusCause("FieldValueRequired", "Required value", path))
    versions = spec.get("versions") or []
    if not versions:
        causes.append(
            StatusCause(
                "FieldValueRequired",
                "Required value: must have exactly one version marked as storage version",
                "spec.versions",
            )
        )
    elif sum(1 for version in versions if version.get("storage")) != 1:
        causes.append(
            StatusCause(
                "FieldValueInvalid",
                "Invalid value: must have exactly one version marked as storage version",
                "spec.versions",
            )
        )
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        causes.append(
            StatusCause(
                "FieldValueNotSupported",
                f'Unsupported value: "{spec.get("scope")}": supported values: "Cluster", "Namespaced"',
                "spec.scope",
            )
        )
    causes.extend(conversion_causes(spec))
    expected = f"{names.get('plural')}.{spec.get('group')}"
    if not causes and name != expected:
        causes.append(
            StatusCause(
                "FieldValueInvalid",
                f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group',
                "metadata.name",
            )
        )
    if not causes:
        causes = acceptance_causes(crd)
    if causes:
        raise invalid("CustomResourceDefinition", "apiextensions.k8s.io", name, causes)
    return types_from_crd(crd)


def acceptance_causes(crd: dict[str, Any]) -> list[StatusCause]:
    """What else kube-apiserver's CRD validation refuses (a schema that is not structural, a CEL rule that does
    not compile, a default its schema rejects...), from the same offline check `pyop make manifests` runs
    (pyop_scaffold.manifests.acceptance, shipped in the same distribution; it needs no CLI dependency)."""
    try:
        from pyop_scaffold.manifests.acceptance import check_crd
    except ImportError:  # pragma: no cover - a copy of pyop without its generator package
        return []
    from pyop.testing.crds.validation import cause_from_field_error

    return [cause_from_field_error(error) for error in check_crd(crd)]


def crd_status(crd: dict[str, Any], previous: dict[str, Any] | None, now: str) -> dict[str, Any]:
    """Established and NamesAccepted at once: there is no controller delay to model."""
    spec = crd["spec"]
    names = dict(spec["names"])
    names.setdefault("singular", names["kind"].lower())
    names.setdefault("listKind", names["kind"] + "List")
    storage = next(version["name"] for version in spec["versions"] if version.get("storage"))
    stored = list(((previous or {}).get("status") or {}).get("storedVersions") or [])
    if storage not in stored:
        stored.append(storage)
    previous_conditions = ((previous or {}).get("status") or {}).get("conditions")
    if previous_conditions:
        conditions = _terminating(crd, previous_conditions, now)
        return {"conditions": conditions, "acceptedNames": names, "storedVersions": stored}
    conditions = [
        {
            "type": "NamesAccepted",
            "status": "True",
            "reason": "NoConflicts",
            "message": "no conflicts found",
            "lastTransitionTime": now,
        },
        {
            "type": "Established",
            "status": "True",
            "reason": "InitialNamesAccepted",
            "message": "the initial names have been accepted",
            "lastTransitionTime": now,
        },
    ]
    return {"conditions": _terminating(crd, conditions, now), "acceptedNames": names, "storedVersions": stored}


def _terminating(crd: dict[str, Any], conditions: list[dict[str, Any]], now: str) -> list[dict[str, Any]]:
    """A CRD being deleted says so (Terminating=True) while its custom resources are removed."""
    if not crd["metadata"].get("deletionTimestamp"):
        return conditions
    if any(c.get("type") == "Terminating" and c.get("status") == "True" for c in conditions):
        return conditions
    kept = [c for c in conditions if c.get("type") != "Terminating"]
    return [
        *kept,
        {
            "type": "Terminating",
            "status": "True",
            "reason": "InstanceDeletionInProgress",
            "message": "CustomResource deletion is in progress",
            "lastTransitionTime": now,
        },
    ]


def crd_terminating(store: Any, resource_type: ResourceType) -> bool:
    """Whether the CRD serving a custom resource type is being deleted."""
    crd = store.get(CRD_STORAGE_KEY, "", f"{resource_type.plural}.{resource_type.group}")
    return bool(crd and crd["metadata"].get("deletionTimestamp"))


def reject_strategic_merge(resource_type: ResourceType) -> None:
    if resource_type.custom:
        raise ApiError(
            415,
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            reason="UnsupportedMediaType",
        )
