"""A kind with a defaulting and a validating webhook run by a real manager, and its webhook manifest written as
`pyop make manifests` (controller-gen) writes config/webhook/manifests.yaml: service references, not URLs."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from pydantic import Field

from pyop.api import GroupVersion, KubeModel, Resource
from pyop.manager import Manager, ManagerOptions
from pyop.testing import TestAPIServer, schemaless_crd
from pyop.webhook import AdmissionDenied, Warnings, admission_request

GROUP = "hooks.pyop.dev"
PATH = f"/apis/{GROUP}/v1/namespaces/default/gizmos"
MUTATE = "/mutate-hooks-pyop-dev-v1-gizmo"
VALIDATE = "/validate-hooks-pyop-dev-v1-gizmo"


class GizmoSpec(KubeModel):
    size: int | None = None
    image: str | None = None


class Gizmo(Resource, group_version=GroupVersion(GROUP, "v1")):
    spec: GizmoSpec = Field(default_factory=GizmoSpec)


class GizmoDefaulter:
    """Size 1 and image `gizmo:latest` unless given, and a `defaulted` label."""

    async def default(self, obj: Gizmo) -> None:
        if obj.spec.size is None:
            obj.spec.size = 1
        if obj.spec.image is None:
            obj.spec.image = "gizmo:latest"
        obj.metadata.labels = {**(obj.metadata.labels or {}), "defaulted": "true"}


class GizmoValidator:
    """Size at most 10 (a warning above 5), image immutable, `protected` objects kept; records its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    async def validate_create(self, obj: Gizmo) -> Warnings:
        self.calls.append(("create", obj))
        return self._check(obj)

    async def validate_update(self, old: Gizmo, new: Gizmo) -> Warnings:
        self.calls.append(("update", (old, new)))
        if old.spec.image != new.spec.image:
            raise AdmissionDenied("spec.image: field is immutable", code=422, reason="Invalid")
        return self._check(new)

    async def validate_delete(self, obj: Gizmo) -> Warnings:
        self.calls.append(("delete", obj))
        if (obj.metadata.labels or {}).get("protected") == "true":
            raise AdmissionDenied(f"{obj.metadata.name} is protected")
        return []

    def _check(self, obj: Gizmo) -> Warnings:
        warnings = [f"dry run: {admission_request().dry_run}"]
        size = obj.spec.size or 0
        if size > 10:
            raise AdmissionDenied("spec.size: must be at most 10", warnings=["sizes above 5 are slow"])
        return [*warnings, "sizes above 5 are slow"] if size > 5 else warnings


def gizmo_crd() -> dict[str, Any]:
    return schemaless_crd(GROUP, "Gizmo", "gizmos")


def gizmo(name: str = "g", labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Gizmo",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": dict(spec),
    }


def manifests(
    *,
    failure_policy: str = "Fail",
    object_selector: dict[str, Any] | None = None,
    namespace_selector: dict[str, Any] | None = None,
    timeout: int | None = None,
) -> list[dict[str, Any]]:
    """The two configurations as controller-gen writes them for the Gizmo markers."""

    def webhook(name: str, path: str, operations: list[str]) -> dict[str, Any]:
        hook: dict[str, Any] = {
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": path}},
            "failurePolicy": failure_policy,
            "name": name,
            "rules": [
                {
                    "apiGroups": [GROUP],
                    "apiVersions": ["v1"],
                    "operations": operations,
                    "resources": ["gizmos"],
                }
            ],
            "sideEffects": "None",
        }
        if object_selector is not None:
            hook["objectSelector"] = object_selector
        if namespace_selector is not None:
            hook["namespaceSelector"] = namespace_selector
        if timeout is not None:
            hook["timeoutSeconds"] = timeout
        return hook

    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "mutating-webhook-configuration"},
            "webhooks": [webhook("mgizmo-v1.kb.io", MUTATE, ["CREATE", "UPDATE"])],
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "validating-webhook-configuration"},
            "webhooks": [webhook("vgizmo-v1.kb.io", VALIDATE, ["CREATE", "UPDATE", "DELETE"])],
        },
    ]


def webhook_manager(server: TestAPIServer, cert_dir: Path) -> Manager:
    """A manager on the test server serving its webhooks on a free local port with the certificate in cert_dir."""
    return Manager(
        ManagerOptions(
            config=server.client_config(),
            webhook_host="127.0.0.1",
            webhook_port=0,
            webhook_cert_path=str(cert_dir),
            handle_signals=False,
            graceful_shutdown_timeout=5.0,
        )
    )


def closed_port_url() -> str:
    """An https URL nothing listens on (the port was bound and released): a webhook that is down."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"https://127.0.0.1:{port}"
