"""ConversionReview v1 (`/convert`): every object converted to `desiredAPIVersion` through its kind's hub.

controller-runtime's `pkg/webhook/conversion`: one endpoint for every kind of the operator; a spoke converts to
the hub (`convert_to`), the hub to a spoke (`convert_from`), spoke to spoke through the hub. Any failure fails
the whole review (`result.status: Failure` with the message, no objects), which the API server reports to the
client. A body that is not a ConversionReview with a request gets HTTP 400, as controller-runtime answers.
An object already in the desired version is returned as it came.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from pyop.client.typed import dump
from pyop.webhook.interfaces import is_hub

__all__ = ["CONVERSION_API_VERSION", "ConversionError", "ConversionWebhook", "KindVersions"]

log = logging.getLogger("pyop.webhook")

CONVERSION_API_VERSION = "apiextensions.k8s.io/v1"


class ConversionError(Exception):
    """An object that cannot be converted; its message becomes the review's failure message."""


class MalformedReview(Exception):
    """The body is not a ConversionReview with a request (HTTP 400)."""


@dataclass
class KindVersions:
    """The model classes of one kind: the hub and its spokes, by version."""

    hub: type[BaseModel]
    by_version: dict[str, type[BaseModel]] = field(default_factory=dict)


def _group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


class ConversionWebhook:
    """The `/convert` endpoint's logic; kinds are added by `WebhookBuilder.with_conversion`."""

    def __init__(self) -> None:
        self.kinds: dict[tuple[str, str], KindVersions] = {}

    def add(self, hub: type[BaseModel], spokes: list[type[BaseModel]]) -> None:
        """Serve conversions of `hub`'s kind between `hub` and `spokes`."""
        if not is_hub(hub):
            raise ValueError(f"{hub.__name__} is not marked as a hub: mix in pyop.webhook.Hub")
        info = _resource_info(hub)
        versions = KindVersions(hub=hub, by_version={info.version: hub})
        for spoke in spokes:
            spoke_info = _resource_info(spoke)
            if (spoke_info.group, spoke_info.kind) != (info.group, info.kind):
                raise ValueError(f"{spoke.__name__} is not a version of {info.group}/{info.kind}")
            if spoke_info.version in versions.by_version:
                raise ValueError(f"two models for version {spoke_info.version} of {info.kind}")
            if not (callable(getattr(spoke, "convert_to", None)) and callable(getattr(spoke, "convert_from", None))):
                raise ValueError(f"{spoke.__name__} is not Convertible: it needs convert_to and convert_from")
            versions.by_version[spoke_info.version] = spoke
        key = (info.group, info.kind)
        if key in self.kinds:
            raise ValueError(f"conversion of {info.kind}.{info.group} is already registered")
        self.kinds[key] = versions

    async def answer(self, body: bytes) -> dict[str, Any]:
        """The ConversionReview answering `body`; raises MalformedReview when it is not one."""
        try:
            review = json.loads(body)
        except ValueError as error:
            raise MalformedReview(f"the body is not JSON: {error}") from None
        if not isinstance(review, dict) or not isinstance(review.get("request"), dict):
            raise MalformedReview("the body is not a ConversionReview with a request")
        request = review["request"]
        uid = request.get("uid", "")
        desired = request.get("desiredAPIVersion")
        objects = request.get("objects") or []
        try:
            if not isinstance(desired, str) or not desired:
                raise ConversionError("request.desiredAPIVersion is missing")
            if not isinstance(objects, list):
                raise ConversionError("request.objects is not a list")
            converted = [self.convert(obj, desired) for obj in objects]
        except ConversionError as error:
            log.error("conversion failed", extra={"uid": uid, "error": str(error)})
            response: dict[str, Any] = {
                "uid": uid,
                "convertedObjects": [],
                "result": {"status": "Failure", "message": str(error)},
            }
        else:
            response = {"uid": uid, "convertedObjects": converted, "result": {"status": "Success"}}
        api_version = review.get("apiVersion") or CONVERSION_API_VERSION
        return {"apiVersion": api_version, "kind": "ConversionReview", "response": response}

    def convert(self, obj: Any, desired_api_version: str) -> dict[str, Any]:
        """One object in the desired version (a dict as the API server expects it)."""
        if not isinstance(obj, dict):
            raise ConversionError("an object to convert is not a JSON object")
        source_api_version = str(obj.get("apiVersion") or "")
        kind = str(obj.get("kind") or "")
        group, source_version = _group_version(source_api_version)
        desired_group, desired_version = _group_version(desired_api_version)
        name = (obj.get("metadata") or {}).get("name", "")
        if desired_group != group:
            raise ConversionError(f"cannot convert {kind} {name!r} from group {group!r} to {desired_group!r}")
        versions = self.kinds.get((group, kind))
        if versions is None:
            raise ConversionError(f"no conversion is registered for {kind}.{group}")
        if source_version == desired_version:
            return obj
        source_model = versions.by_version.get(source_version)
        target_model = versions.by_version.get(desired_version)
        for version, model in ((source_version, source_model), (desired_version, target_model)):
            if model is None:
                raise ConversionError(f"no model for version {version!r} of {kind}.{group}")
        assert source_model is not None and target_model is not None
        try:
            source = source_model.model_validate(obj)
            hub = source if source_model is versions.hub else source.convert_to()  # type: ignore[attr-defined]
            target = hub if target_model is versions.hub else target_model.convert_from(hub)  # type: ignore[attr-defined]
        except Exception as error:
            log.exception("conversion raised", extra={"kind": kind, "object": name})
            raise ConversionError(
                f"converting {kind} {name!r} from {source_api_version} to {desired_api_version}: "
                f"{type(error).__name__}: {error}"
            ) from None
        result = dump(target)
        result["apiVersion"] = desired_api_version
        result["kind"] = kind
        return result


def _resource_info(model: type[BaseModel]) -> Any:
    info = getattr(model, "resource_info", None)
    if info is None:
        raise ValueError(f"{model.__name__} is not a root kind (declare it with group_version=...)")
    return info
