"""`manager.webhook_for(Kind)`: registers a kind's defaulting, validation and conversion webhooks.

controller-runtime's `builder.WebhookBuilder` (`ctrl.NewWebhookManagedBy(mgr).For(&Kind{})`), with
Kubebuilder's default paths, which `pyop make manifests` writes into the webhook configurations:
`/mutate-<group, dots as dashes>-<version>-<kind lowercased>` and `/validate-...` (core group:
`/mutate--v1-pod`); conversion is one `/convert` endpoint for every kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from pyop.webhook.admission import DefaultingHandler, ValidatingHandler
from pyop.webhook.interfaces import Defaulter, Validator
from pyop.webhook.server import WebhookServer

__all__ = ["WebhookBuilder", "WebhookHost", "defaulting_path", "validation_path"]

M = TypeVar("M", bound=BaseModel)


class WebhookHost(Protocol):
    """What the builder needs from a manager."""

    def get_webhook_server(self) -> WebhookServer: ...


def _path_suffix(model: type[BaseModel]) -> str:
    info = getattr(model, "resource_info", None)
    if info is None:
        raise ValueError(f"{model.__name__} is not a root kind (declare it with group_version=...)")
    return f"{info.group.replace('.', '-')}-{info.version}-{info.kind.lower()}"


def defaulting_path(model: type[BaseModel]) -> str:
    """Kubebuilder's path of the mutating webhook of `model`'s kind and version."""
    return f"/mutate-{_path_suffix(model)}"


def validation_path(model: type[BaseModel]) -> str:
    """Kubebuilder's path of the validating webhook of `model`'s kind and version."""
    return f"/validate-{_path_suffix(model)}"


class WebhookBuilder(Generic[M]):
    """Collects a kind's webhooks; `complete()` registers them with the manager's webhook server."""

    def __init__(self, host: WebhookHost, model: type[M]) -> None:
        _path_suffix(model)  # refuse a model that is not a root kind now, not at complete()
        self._host = host
        self._model = model
        self._defaulter: Defaulter[M] | None = None
        self._validator: Validator[M] | None = None
        self._defaulting_path: str | None = None
        self._validation_path: str | None = None
        self._conversion: tuple[type[BaseModel], list[type[BaseModel]]] | None = None

    def with_defaulter(self, defaulter: Defaulter[M]) -> WebhookBuilder[M]:
        if not callable(getattr(defaulter, "default", None)):
            raise TypeError(f"{defaulter!r} has no default(obj) method")
        self._defaulter = defaulter
        return self

    def with_validator(self, validator: Validator[M]) -> WebhookBuilder[M]:
        missing = [
            name
            for name in ("validate_create", "validate_update", "validate_delete")
            if not callable(getattr(validator, name, None))
        ]
        if missing:
            raise TypeError(f"{validator!r} lacks {', '.join(missing)}")
        self._validator = validator
        return self

    def with_defaulting_path(self, path: str) -> WebhookBuilder[M]:
        """Serve the defaulter at `path` instead of Kubebuilder's default (`--defaulting-path`)."""
        self._defaulting_path = _checked_path(path)
        return self

    def with_validation_path(self, path: str) -> WebhookBuilder[M]:
        """Serve the validator at `path` instead of Kubebuilder's default (`--validation-path`)."""
        self._validation_path = _checked_path(path)
        return self

    def with_conversion(self, *, hub: type[Any], spokes: Sequence[type[Any]]) -> WebhookBuilder[M]:
        """Convert the kind between `hub` (marked with `pyop.webhook.Hub`) and its `spokes` at `/convert`."""
        if self._model is not hub and self._model not in spokes:
            raise ValueError(f"{self._model.__name__} is neither the hub nor one of the spokes")
        self._conversion = (hub, list(spokes))
        return self

    def complete(self) -> None:
        """Register what was configured; the manager serves it once it runs."""
        if self._defaulter is None and self._validator is None and self._conversion is None:
            raise ValueError(
                f"webhook_for({self._model.__name__}) needs with_defaulter, with_validator or with_conversion"
            )
        if self._defaulter is None and self._defaulting_path is not None:
            raise ValueError("with_defaulting_path without with_defaulter")
        if self._validator is None and self._validation_path is not None:
            raise ValueError("with_validation_path without with_validator")
        server = self._host.get_webhook_server()
        if self._conversion is not None:
            hub, spokes = self._conversion
            server.conversion.add(hub, spokes)
        if self._defaulter is not None:
            path = self._defaulting_path or defaulting_path(self._model)
            server.register_admission(path, DefaultingHandler(self._model, self._defaulter))
        if self._validator is not None:
            path = self._validation_path or validation_path(self._model)
            server.register_admission(path, ValidatingHandler(self._model, self._validator))


def _checked_path(path: str) -> str:
    if not path.startswith("/") or path == "/":
        raise ValueError(f"webhook path {path!r} must start with '/' and name something")
    return path
