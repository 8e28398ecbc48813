"""admission.NewForbidden: a plugin's refusal as kube words it, naming the object (or its generateName while the
name is not generated yet, as `extractResourceName` does)."""

from __future__ import annotations

from typing import Any

from pyop.api.status import ApiError, forbidden
from pyop.apiserver.admission.plugins import Attributes


def admission_forbidden(attributes: Attributes, obj: dict[str, Any] | None, reason: str) -> ApiError:
    metadata = (obj or {}).get("metadata") or {}
    name = attributes.name or metadata.get("name") or metadata.get("generateName") or "Unknown"
    resource_type = attributes.resource_type
    return forbidden(resource_type.plural, resource_type.group, name, reason)
