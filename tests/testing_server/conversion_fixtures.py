"""A two-version kind whose versions differ (v1 `spec.size`, v2 `spec.length`: a relabel would lose the value, so
only a real conversion passes), and a conversion webhook over HTTPS whose answers a test can spoil."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from pyop.manager.certificates import write_self_signed_certificate

GROUP = "conv.pyop.dev"
V1 = f"/apis/{GROUP}/v1/namespaces/default/widgets"
V2 = f"/apis/{GROUP}/v2/namespaces/default/widgets"


def _version(name: str, field_name: str, *, storage: bool) -> dict[str, Any]:
    return {
        "name": name,
        "served": True,
        "storage": storage,
        "subresources": {"status": {}},
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {field_name: {"type": "integer"}}},
                    "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
                },
            }
        },
    }


def widget_crd(
    url: str = "", ca_pem: bytes | None = None, *, service: bool = False, review_versions: tuple[str, ...] = ("v1",)
) -> dict[str, Any]:
    """v1 stored, v2 served, converted by the webhook at ``url`` (or a Service reference, as controller-gen and
    config/crd/patches write it)."""
    client: dict[str, Any] = (
        {"service": {"namespace": "system", "name": "webhook-service", "path": "/convert"}} if service else {"url": url}
    )
    if ca_pem is not None:
        client["caBundle"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [_version("v1", "size", storage=True), _version("v2", "length", storage=False)],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {"clientConfig": client, "conversionReviewVersions": list(review_versions)},
            },
        },
    }


def widget(name: str, version: str, value: int, **metadata: Any) -> dict[str, Any]:
    field_name = "size" if version == "v1" else "length"
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "Widget",
        "metadata": {"name": name, **metadata},
        "spec": {field_name: value},
    }


def convert(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    """What the webhook does: v1 `size` <-> v2 `length`."""
    result = json.loads(json.dumps(obj))
    spec = result.setdefault("spec", {})
    if desired.endswith("/v2") and "size" in spec:
        spec["length"] = spec.pop("size")
    elif desired.endswith("/v1") and "length" in spec:
        spec["size"] = spec.pop("length")
    result["apiVersion"] = desired
    return result


Answer = Callable[[dict[str, Any]], Any]


def good_answer(review: dict[str, Any]) -> dict[str, Any]:
    request = review["request"]
    return {
        "apiVersion": review["apiVersion"],
        "kind": "ConversionReview",
        "response": {
            "uid": request["uid"],
            "convertedObjects": [convert(obj, request["desiredAPIVersion"]) for obj in request["objects"]],
            "result": {"status": "Success"},
        },
    }


@dataclass
class ConversionServer:
    """An HTTPS conversion webhook on 127.0.0.1: records every review; ``answer`` makes the reply (a dict is sent
    as JSON, a ``web.Response`` as it is); ``delay`` seconds before answering."""

    url: str = ""
    ca_pem: bytes = b""
    reviews: list[dict[str, Any]] = field(default_factory=list)
    answer: Answer = good_answer
    delay: float = 0.0
    admitted: list[dict[str, Any]] = field(default_factory=list)

    @property
    def desired_versions(self) -> list[str]:
        return [review["request"]["desiredAPIVersion"] for review in self.reviews]

    async def admit(self, request: web.Request) -> web.StreamResponse:
        """A mutating webhook for v1 Widgets: records the object it is shown and doubles ``spec.size``."""
        review = json.loads(await request.read())
        obj = review["request"]["object"]
        self.admitted.append(obj)
        patch = [{"op": "replace", "path": "/spec/size", "value": obj["spec"]["size"] * 2}]
        response = {
            "uid": review["request"]["uid"],
            "allowed": True,
            "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(patch).encode()).decode(),
        }
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})

    async def handle(self, request: web.Request) -> web.StreamResponse:
        review = json.loads(await request.read())
        self.reviews.append(review)
        if self.delay:
            await asyncio.sleep(self.delay)
        reply = self.answer(review)
        if isinstance(reply, web.StreamResponse):
            return reply
        return web.json_response(reply)


async def start_conversion_server(cert_dir: Path) -> tuple[ConversionServer, web.AppRunner]:
    certificate, _ = write_self_signed_certificate(cert_dir, ["127.0.0.1", "localhost"])
    hook = ConversionServer(ca_pem=certificate.read_bytes())
    app = web.Application()
    app.router.add_post("/convert", hook.handle)
    app.router.add_post("/mutate", hook.admit)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_dir / "tls.crt", cert_dir / "tls.key")
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = runner.addresses[0][1]
    hook.url = f"https://127.0.0.1:{port}/convert"
    return hook, runner
