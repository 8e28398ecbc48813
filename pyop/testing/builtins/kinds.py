"""Helpers of particular built-in kinds: CRD validation and status, Secret stringData (see `strategies`).

The per-kind behaviour the registry asks for lives in the kinds' strategies (`strategies`); these are the helpers
they and the controllers share.
"""

from __future__ import annotations

import base64
from typing import Any

from pyop.api.status import StatusCause, invalid
from pyop.apiserver.authentication.user import UserInfo as UserInfo  # moved there; re-exported for old imports
from pyop.apiserver.registry.resources import ResourceType, types_from_crd
from pyop.testing.crds.conversion import conversion_causes

CRD_STORAGE_KEY = "customresourcedefinitions.apiextensions.k8s.io"
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
NAMESPACE_FINALIZER = "kubernetes"


def fold_secret_string_data(obj: dict[str, Any]) -> None:
    """A Secret's ``stringData`` is write-only: the API server merges it into ``data`` (base64)."""
    if "stringData" not in obj:
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
