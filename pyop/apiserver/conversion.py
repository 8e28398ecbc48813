"""A kind served in several versions by an aggregated API server: one storage version (the hub), the others
converting to and from it, with the same models and functions a CRD's conversion webhook uses.

Serve each version's model in the `APIGroupVersion` of its version; mark the storage version's model as the hub
(`pyop.webhook.Hub`) and give every other version's model ``convert_to(self) -> Hub`` and
``convert_from(cls, hub) -> Self`` (`pyop.webhook.Convertible`)::

    class Flunder(Resource, Hub, group_version=V1): ...                          # stored, served at v1
    class FlunderV1Alpha1(Resource, group_version=V1ALPHA1, kind="Flunder"):      # served at v1alpha1
        def convert_to(self) -> Flunder: ...
        @classmethod
        def convert_from(cls, hub: Flunder) -> Self: ...

    run([APIGroupVersion(GROUP, "v1", [Resource(Flunder)]),
         APIGroupVersion(GROUP, "v1alpha1", [Resource(FlunderV1Alpha1)])])

Objects are stored once, in the hub's version; every read (get, list, watch events, the object a write returns)
converts to the request's version and every write from it (as k8s.io/apiserver converts through the internal
version). A spoke converts to another spoke through the hub. ``metadata`` is the stored object's whatever the
functions return, except labels and annotations (as apiextensions-apiserver restores a converted custom resource's
metadata); a conversion function that raises is the API server's 500 InternalError with the reason. Discovery
lists every version, the highest by Kubernetes' version order preferred; OpenAPI describes each version with its
model.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from pyop.api.status import ApiError
from pyop.webhook.conversion import ConversionError
from pyop.webhook.conversion import ConversionWebhook as HubAndSpokes
from pyop.webhook.interfaces import is_hub


class ConversionDefinitionError(ValueError):
    """Versions of a kind that cannot be served together (no hub, two hubs, a spoke that does not convert)."""


def convertible(model: type[Any]) -> bool:
    return callable(getattr(model, "convert_to", None)) and callable(getattr(model, "convert_from", None))


class HubConversion:
    """The `pyop.apiserver.registry.conversion.Converter` of one kind: through its hub, in process."""

    calls_out: ClassVar[bool] = False

    def __init__(self, hub: type[BaseModel], spokes: list[type[BaseModel]]) -> None:
        self.hub = hub
        self.spokes = list(spokes)
        self._models = HubAndSpokes()
        try:
            self._models.add(hub, self.spokes)
        except ValueError as error:
            raise ConversionDefinitionError(str(error)) from None

    def convert(self, obj: dict[str, Any], api_version: str) -> dict[str, Any]:
        if obj.get("apiVersion") == api_version:
            return obj
        try:
            result = self._models.convert(obj, api_version)
        except ConversionError as error:  # apierrors.NewInternalError, as a failed scheme conversion is answered
            detail = str(error)
            raise ApiError(
                500,
                f"Internal error occurred: {detail}",
                reason="InternalError",
                raw_details={"causes": [{"message": detail}]},
            ) from None
        metadata = dict(obj.get("metadata") or {})
        answered = result.get("metadata") or {}
        for field in ("labels", "annotations"):
            if answered.get(field):
                metadata[field] = answered[field]
            else:
                metadata.pop(field, None)
        return {**result, "metadata": metadata}

    async def convert_async(self, obj: dict[str, Any], api_version: str, caller: Any) -> dict[str, Any]:
        return self.convert(obj, api_version)


def hub_of(models: list[type[Any]], name: str) -> tuple[type[Any], list[type[Any]]]:
    """The hub and the spokes of one kind's version models (``name``: the kind's ``<plural>.<group>``);
    `ConversionDefinitionError` says what is missing."""
    versions = " and ".join(model.resource_info.version for model in models)
    hubs = [model for model in models if is_hub(model)]
    if len(hubs) != 1:
        named = f"both {hubs[0].__name__} and {hubs[1].__name__} are" if len(hubs) > 1 else "none is"
        raise ConversionDefinitionError(
            f"{name} is served in {versions}: exactly one version's model must be the hub (its storage version: "
            f"mix in pyop.webhook.Hub), {named}"
        )
    hub = hubs[0]
    spokes = [model for model in models if model is not hub]
    for spoke in spokes:
        if not convertible(spoke):
            raise ConversionDefinitionError(
                f"{name}: {spoke.__name__} ({spoke.resource_info.version}) does not convert to the hub "
                f"{hub.__name__}: give it convert_to(self) -> {hub.__name__} and "
                f"convert_from(cls, hub: {hub.__name__}) -> Self"
            )
    return hub, spokes


__all__ = ["ConversionDefinitionError", "HubConversion", "convertible", "hub_of"]
