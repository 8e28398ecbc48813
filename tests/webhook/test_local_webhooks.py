"""`make run ENABLE_WEBHOOKS=true LOCAL_WEBHOOKS=127.0.0.1`: the manager serves its webhooks with a certificate made
on the fly, installs the project's configurations and converting CRDs into the API server pointed at itself, and
takes them back when it stops."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from testing_server.conversion_fixtures import GROUP as CONV_GROUP
from testing_server.conversion_fixtures import good_answer, widget, widget_crd

from pyop.client.errors import ForbiddenError
from pyop.manager import Manager, ManagerOptions
from pyop.testing import TestAPIServer, schemaless_crd
from pyop.webhook.local import local_webhooks_from_environment

GUARD = 10.0


def deny_labelled(body: bytes) -> dict[str, Any]:
    request = json.loads(body)["request"]
    labels = (request["object"].get("metadata") or {}).get("labels") or {}
    allowed = labels.get("deny") != "yes"
    response: dict[str, Any] = {"uid": request["uid"], "allowed": allowed}
    if not allowed:
        response["status"] = {"code": 403, "message": "denied by the local webhook"}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


def write_project(root: Path) -> None:
    """The files `make manifests` and `create webhook --conversion` leave in a project."""
    (root / "config" / "webhook").mkdir(parents=True)
    configuration = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "validating-webhook-configuration"},
        "webhooks": [
            {
                "name": "vgizmo.kb.io",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": "/validate"}},
                "rules": [
                    {
                        "apiGroups": ["hooks.pyop.dev"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["gizmos"],
                    }
                ],
            }
        ],
    }
    (root / "config" / "webhook" / "manifests.yaml").write_text(yaml.safe_dump(configuration))
    (root / "config" / "crd" / "patches").mkdir(parents=True)
    patch = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{CONV_GROUP}"},
    }
    (root / "config" / "crd" / "patches" / "webhook_in_widgets.yaml").write_text(yaml.safe_dump(patch))


def manager_for(server: TestAPIServer, cert_dir: Path) -> Manager:
    manager = Manager(
        ManagerOptions(
            config=server.client_config(),
            webhook_host="127.0.0.1",
            webhook_port=0,
            webhook_cert_path=str(cert_dir),  # nothing there: the local certificate is made on the fly
            handle_signals=False,
        )
    )

    async def validate(body: bytes, content_type: str) -> tuple[int, dict[str, Any] | None]:
        return 200, deny_labelled(body)

    async def convert(body: bytes, content_type: str) -> tuple[int, dict[str, Any] | None]:
        return 200, good_answer(json.loads(body))

    manager.get_webhook_server().register("/validate", validate)
    manager.get_webhook_server().register("/convert", convert)
    return manager


async def test_the_local_manager_is_called_by_the_api_server_and_cleans_up(tmp_path: Path) -> None:
    write_project(tmp_path)
    async with TestAPIServer() as server:
        server.add_crd(schemaless_crd("hooks.pyop.dev", "Gizmo", "gizmos"))
        crd = widget_crd()
        crd["spec"].pop("conversion")  # installed by `make install` / `pyop test-server` without a reachable webhook
        server.add_crd(crd)
        manager = manager_for(server, tmp_path / "no-certs")
        local = local_webhooks_from_environment(manager, {"LOCAL_WEBHOOKS": "127.0.0.1"}, root=tmp_path)
        assert local is not None
        client = manager.client.dynamic
        async with manager:
            async with asyncio.timeout(GUARD):
                await local.ready.wait()
            gizmos = await client.resource("hooks.pyop.dev/v1", "Gizmo")
            await client.create(gizmos, {"metadata": {"name": "ok"}, "spec": {}}, "default")
            with pytest.raises(ForbiddenError, match="denied by the local webhook"):
                await client.create(
                    gizmos, {"metadata": {"name": "no", "labels": {"deny": "yes"}}, "spec": {}}, "default"
                )
            v1 = await client.resource(f"{CONV_GROUP}/v1", "Widget")
            v2 = await client.resource(f"{CONV_GROUP}/v2", "Widget")
            await client.create(v1, widget("w", "v1", 4), "default")
            assert (await client.get(v2, "w", "default"))["spec"] == {"length": 4}  # converted by the local /convert
        # Stopped: nothing of the local run is left in the API server.
        assert (
            server.store.get(
                "validatingwebhookconfigurations.admissionregistration.k8s.io", "", "validating-webhook-configuration"
            )
            is None
        )
        stored_crd = server.store.get("customresourcedefinitions.apiextensions.k8s.io", "", f"widgets.{CONV_GROUP}")
        assert stored_crd is not None and "conversion" not in stored_crd["spec"]
        assert not local.folder.exists()


def test_nothing_happens_without_the_variable_or_without_webhooks(tmp_path: Path) -> None:
    manager = Manager(ManagerOptions(handle_signals=False))
    assert local_webhooks_from_environment(manager, {"LOCAL_WEBHOOKS": "127.0.0.1"}, root=tmp_path) is None
    manager.get_webhook_server()
    assert local_webhooks_from_environment(manager, {}, root=tmp_path) is None


def test_the_host_comes_from_the_environment_and_never_in_a_pod() -> None:
    from pyop.webhook.local import local_host

    assert local_host({"ENABLE_WEBHOOKS": "true"}) == "127.0.0.1"  # make run ENABLE_WEBHOOKS=true
    assert local_host({"ENABLE_WEBHOOKS": "true", "LOCAL_WEBHOOKS": "host.docker.internal"}) == "host.docker.internal"
    assert local_host({"ENABLE_WEBHOOKS": "true", "KUBERNETES_SERVICE_HOST": "10.0.0.1"}) is None
    assert local_host({"ENABLE_WEBHOOKS": "true", "LOCAL_WEBHOOKS": "false"}) is None
    assert local_host({}) is None and local_host({"ENABLE_WEBHOOKS": "false"}) is None
