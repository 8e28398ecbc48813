"""Shared pieces of the webhook tests: Gadget models in three versions, webhooks for them, review builders,
and an HTTPS client that trusts the server's certificate.

Named uniquely (not `helpers.py`) because pytest imports test-folder modules by basename.
"""

from __future__ import annotations

import base64
import json
import ssl
import uuid
from pathlib import Path
from typing import Any, Self

import aiohttp
from pydantic import Field

from pyop.api import GroupVersion, KubeModel, Resource
from pyop.manager import Manager, ManagerOptions
from pyop.manager.certificates import write_self_signed_certificate
from pyop.testing import TestAPIServer
from pyop.webhook import AdmissionDenied, Hub, Warnings, admission_request

GROUP = "hooks.pyop.dev"


class Port(KubeModel):
    name: str
    container_port: int | None = None


class GadgetSpec(KubeModel):
    size: int | None = None
    image: str | None = None
    ports: list[Port] | None = None


class Gadget(Resource, Hub, group_version=GroupVersion(GROUP, "v1")):
    """The hub version."""

    spec: GadgetSpec = Field(default_factory=GadgetSpec)


class GadgetV2Spec(KubeModel):
    replicas: int | None = None
    container_image: str | None = None


class GadgetV2(Resource, group_version=GroupVersion(GROUP, "v2"), kind="Gadget"):
    spec: GadgetV2Spec = Field(default_factory=GadgetV2Spec)

    def convert_to(self) -> Gadget:
        return Gadget(metadata=self.metadata, spec=GadgetSpec(size=self.spec.replicas, image=self.spec.container_image))

    @classmethod
    def convert_from(cls, hub: Gadget) -> Self:
        if hub.spec.size is not None and hub.spec.size < 0:
            raise ValueError(f"size {hub.spec.size} has no v2 form")
        return cls(metadata=hub.metadata, spec=GadgetV2Spec(replicas=hub.spec.size, container_image=hub.spec.image))


class GadgetV1beta1Spec(KubeModel):
    scale: str | None = None  # the size written as text in this old version


class GadgetV1beta1(Resource, group_version=GroupVersion(GROUP, "v1beta1"), kind="Gadget"):
    spec: GadgetV1beta1Spec = Field(default_factory=GadgetV1beta1Spec)

    def convert_to(self) -> Gadget:
        size = int(self.spec.scale) if self.spec.scale is not None else None
        return Gadget(metadata=self.metadata, spec=GadgetSpec(size=size))

    @classmethod
    def convert_from(cls, hub: Gadget) -> Self:
        scale = str(hub.spec.size) if hub.spec.size is not None else None
        return cls(metadata=hub.metadata, spec=GadgetV1beta1Spec(scale=scale))


class GadgetDefaulter:
    """Defaults size and image, labels the object, and gives ports without one a port number; the annotation
    `refuse` makes it deny, `explode` makes it fail as a bug would."""

    def __init__(self) -> None:
        self.calls = 0

    async def default(self, obj: Gadget) -> None:
        self.calls += 1
        if (obj.metadata.annotations or {}).get("refuse"):
            raise AdmissionDenied("refused while defaulting")
        if (obj.metadata.annotations or {}).get("explode"):
            raise KeyError("spec")
        if obj.spec.size is None:
            obj.spec.size = 1
        if obj.spec.image is None:
            obj.spec.image = "gadget:latest"
        obj.metadata.labels = {**(obj.metadata.labels or {}), "defaulted": "true"}
        for port in obj.spec.ports or []:
            if port.container_port is None:
                port.container_port = 8080


class GadgetValidator:
    """Size at most 10 (a warning above 5), image immutable, `protected` objects not deletable; `explode`
    stands for a bug in the webhook. Records what it was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    async def validate_create(self, obj: Gadget) -> Warnings:
        self.seen.append(("create", obj))
        return self._check(obj)

    async def validate_update(self, old: Gadget, new: Gadget) -> Warnings:
        self.seen.append(("update", (old, new)))
        if old.spec.image != new.spec.image:
            raise AdmissionDenied("spec.image: field is immutable", code=422, reason="Invalid")
        return self._check(new)

    async def validate_delete(self, obj: Gadget) -> Warnings:
        self.seen.append(("delete", obj))
        if (obj.metadata.labels or {}).get("protected") == "true":
            raise AdmissionDenied(f"{obj.metadata.name} is protected")
        return []

    def _check(self, obj: Gadget) -> Warnings:
        if (obj.metadata.annotations or {}).get("explode"):
            raise RuntimeError("the validator broke")
        if (obj.metadata.annotations or {}).get("want-dry-run"):
            return [f"dry run: {admission_request().dry_run}"]
        size = obj.spec.size or 0
        if size > 10:
            raise AdmissionDenied("spec.size: must be at most 10", warnings=["sizes above 5 are slow"])
        return ["sizes above 5 are slow"] if size > 5 else []


def certificate_folder(folder: Path) -> Path:
    """A serving pair for 127.0.0.1 in `folder`."""
    write_self_signed_certificate(folder, ["127.0.0.1", "localhost"])
    return folder


def webhook_manager(server: TestAPIServer, cert_dir: Path, **options: Any) -> Manager:
    """A manager on the test server with its webhook server on a free local port; other servers off."""
    options.setdefault("handle_signals", False)
    options.setdefault("graceful_shutdown_timeout", 5.0)
    return Manager(
        ManagerOptions(
            config=server.client_config(),
            webhook_host="127.0.0.1",
            webhook_port=0,
            webhook_cert_path=str(cert_dir),
            **options,
        )
    )


def gadget(name: str = "g", **spec: Any) -> dict[str, Any]:
    """A raw Gadget as the API server sends it."""
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Gadget",
        "metadata": {"name": name, "namespace": "default", "uid": str(uuid.uuid4())},
        "spec": dict(spec),
    }


def admission_review(
    operation: str, obj: dict[str, Any] | None = None, old: dict[str, Any] | None = None, *, dry_run: bool = False
) -> dict[str, Any]:
    source = obj or old or {}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": {"group": GROUP, "version": "v1", "kind": "Gadget"},
            "resource": {"group": GROUP, "version": "v1", "resource": "gadgets"},
            "name": source.get("metadata", {}).get("name", ""),
            "namespace": "default",
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters"]},
            "object": obj,
            "oldObject": old,
            "dryRun": dry_run,
        },
    }


def client_ssl_context(cert_dir: Path) -> ssl.SSLContext:
    """Trusts the server's self-signed certificate only, as the API server trusts the webhook's CA bundle."""
    return ssl.create_default_context(cafile=str(cert_dir / "tls.crt"))


async def post(
    manager: Manager,
    path: str,
    body: Any,
    cert_dir: Path,
    *,
    content_type: str = "application/json",
    method: str = "POST",
) -> tuple[int, Any]:
    """Send `body` (JSON-encoded unless bytes) to the manager's webhook server: (HTTP status, JSON body or text)."""
    assert manager.webhook_server is not None
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with (
        aiohttp.ClientSession() as session,
        session.request(
            method,
            manager.webhook_server.url + path,
            data=data,
            headers={"Content-Type": content_type},
            ssl=client_ssl_context(cert_dir),
        ) as response,
    ):
        text = await response.text()
        if response.content_type == "application/json":
            return response.status, json.loads(text)
        return response.status, text


def decoded_patch(response: dict[str, Any]) -> list[dict[str, Any]]:
    assert response["patchType"] == "JSONPatch"
    operations: list[dict[str, Any]] = json.loads(base64.b64decode(response["patch"]))
    return operations
