"""Admission webhooks end to end: a manager serves a defaulter and a validator over HTTPS, the project's webhook
manifest is installed into the test API server pointed at it, and writes through the server are admitted by it."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml

from pyop.manager import Manager
from pyop.manager.certificates import write_self_signed_certificate
from pyop.testing import TestAPIServer
from testing_server.helpers import Api
from testing_server.webhook_fixtures import (
    GROUP,
    PATH,
    Gizmo,
    GizmoDefaulter,
    GizmoValidator,
    closed_port_url,
    gizmo,
    gizmo_crd,
    manifests,
    webhook_manager,
)

CONFIGS = "/apis/admissionregistration.k8s.io/v1"
MERGE = "application/merge-patch+json"


@dataclass
class Webhooks:
    manager: Manager
    validator: GizmoValidator
    cert: Path

    @property
    def url(self) -> str:
        assert self.manager.webhook_server is not None
        return self.manager.webhook_server.url


@pytest_asyncio.fixture
async def webhooks(server: TestAPIServer, tmp_path: Path) -> AsyncIterator[Webhooks]:
    cert_dir = tmp_path / "certs"
    write_self_signed_certificate(cert_dir, ["127.0.0.1", "localhost"])
    server.add_crd(gizmo_crd())
    manager = webhook_manager(server, cert_dir)
    validator = GizmoValidator()
    manager.webhook_for(Gizmo).with_defaulter(GizmoDefaulter()).with_validator(validator).complete()
    async with manager:
        yield Webhooks(manager, validator, cert_dir / "tls.crt")


async def call(api: Api, method: str, path: str, body: Any = None, **params: Any) -> tuple[int, Any, list[str]]:
    """(status, decoded body, Warning headers)."""
    data = None if body is None else json.dumps(body)
    headers = {"Content-Type": MERGE if method == "PATCH" else "application/json"}
    async with api.session.request(method, path, data=data, headers=headers, params=params or None) as response:
        text = await response.text()
        return response.status, json.loads(text) if text else None, response.headers.getall("Warning", [])


def install(server: TestAPIServer, webhooks: Webhooks, **manifest: Any) -> None:
    server.install_webhooks(manifests(**manifest), url=webhooks.url, ca_bundle=webhooks.cert)


async def test_installing_the_manifest_points_every_webhook_at_the_local_server(
    server: TestAPIServer, api: Api, webhooks: Webhooks, tmp_path: Path
) -> None:
    manifest = tmp_path / "manifests.yaml"
    manifest.write_text(yaml.safe_dump_all(manifests()))
    assert server.install_webhooks(manifest, url=webhooks.url, ca_bundle=webhooks.cert) == [
        "mutating-webhook-configuration",
        "validating-webhook-configuration",
    ]
    status, stored = await api.get(f"{CONFIGS}/mutatingwebhookconfigurations/mutating-webhook-configuration")
    assert status == 200
    hook = stored["webhooks"][0]
    assert hook["clientConfig"]["url"] == webhooks.url + "/mutate-hooks-pyop-dev-v1-gizmo"
    assert "service" not in hook["clientConfig"] and hook["clientConfig"]["caBundle"]
    # The API's defaults are stored, as kube-apiserver stores them.
    assert (hook["timeoutSeconds"], hook["matchPolicy"], hook["reinvocationPolicy"]) == (10, "Equivalent", "Never")
    assert hook["namespaceSelector"] == {} and hook["objectSelector"] == {}


async def test_a_create_through_the_server_is_defaulted_and_validated(
    server: TestAPIServer, api: Api, webhooks: Webhooks
) -> None:
    install(server, webhooks)
    status, created, warnings = await call(api, "POST", PATH, gizmo("a"))
    assert status == 201, created
    assert created["spec"] == {"size": 1, "image": "gizmo:latest"}
    assert created["metadata"]["labels"] == {"defaulted": "true"}
    assert warnings == ['299 - "dry run: False"']
    _, stored = await api.get(f"{PATH}/a")
    assert stored["spec"] == {"size": 1, "image": "gizmo:latest"}
    operation, seen = webhooks.validator.calls[-1]
    assert operation == "create" and seen.spec.size == 1  # the validator sees the defaulted object
    assert seen.metadata.uid == created["metadata"]["uid"]


async def test_an_invalid_object_is_denied_with_the_webhooks_message_and_status(
    server: TestAPIServer, api: Api, webhooks: Webhooks
) -> None:
    install(server, webhooks)
    status, error, warnings = await call(api, "POST", PATH, gizmo("big", size=11))
    assert status == 403
    assert error["reason"] == "Forbidden"
    assert error["message"] == 'admission webhook "vgizmo-v1.kb.io" denied the request: spec.size: must be at most 10'
    assert warnings == ['299 - "sizes above 5 are slow"']  # warnings reach the client with the denial
    assert (await api.get(f"{PATH}/big"))[0] == 404


async def test_warnings_are_returned_as_warning_headers(server: TestAPIServer, api: Api, webhooks: Webhooks) -> None:
    install(server, webhooks)
    status, _, warnings = await call(api, "POST", PATH, gizmo("slow", size=6))
    assert status == 201
    assert warnings == ['299 - "dry run: False"', '299 - "sizes above 5 are slow"']


async def test_an_update_is_validated_with_the_old_and_the_new_object(
    server: TestAPIServer, api: Api, webhooks: Webhooks
) -> None:
    install(server, webhooks)
    await api.create_ok(PATH, gizmo("u", image="one:1"))
    status, error, _ = await call(api, "PATCH", f"{PATH}/u", {"spec": {"image": "two:2"}})
    assert (status, error["reason"]) == (422, "Invalid")
    assert error["message"] == 'admission webhook "vgizmo-v1.kb.io" denied the request: spec.image: field is immutable'
    operation, (old, new) = webhooks.validator.calls[-1]
    assert operation == "update" and (old.spec.image, new.spec.image) == ("one:1", "two:2")
    status, patched, _ = await call(api, "PATCH", f"{PATH}/u", {"spec": {"size": 3}})
    assert status == 200 and patched["spec"] == {"size": 3, "image": "one:1"}


async def test_an_update_that_drops_defaulted_fields_is_defaulted_again(
    server: TestAPIServer, api: Api, webhooks: Webhooks
) -> None:
    install(server, webhooks)
    created = await api.create_ok(PATH, gizmo("d", image="one:1", size=4))
    replacement = gizmo("d", image="one:1")
    replacement["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    status, updated, _ = await call(api, "PUT", f"{PATH}/d", replacement)
    assert status == 200 and updated["spec"]["size"] == 1


async def test_a_delete_is_validated_with_the_object_being_deleted(
    server: TestAPIServer, api: Api, webhooks: Webhooks
) -> None:
    install(server, webhooks)
    await api.create_ok(PATH, gizmo("keep", labels={"protected": "true"}))
    status, error, _ = await call(api, "DELETE", f"{PATH}/keep")
    assert status == 403
    assert error["message"] == 'admission webhook "vgizmo-v1.kb.io" denied the request: keep is protected'
    assert (await api.get(f"{PATH}/keep"))[0] == 200
    await api.create_ok(PATH, gizmo("go"))
    assert (await api.delete(f"{PATH}/go"))[0] == 200
    assert webhooks.validator.calls[-1][0] == "delete"


async def test_a_dry_run_is_admitted_with_dry_run_set_and_stores_nothing(
    server: TestAPIServer, api: Api, webhooks: Webhooks
) -> None:
    install(server, webhooks)
    status, answer, warnings = await call(api, "POST", PATH, gizmo("dry"), dryRun="All")
    assert status == 201 and answer["spec"]["size"] == 1
    assert warnings == ['299 - "dry run: True"']
    assert (await api.get(f"{PATH}/dry"))[0] == 404


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
async def test_failure_policy_decides_when_the_webhook_is_down(server: TestAPIServer, api: Api, policy: str) -> None:
    server.add_crd(gizmo_crd())
    server.install_webhooks(manifests(failure_policy=policy), url=closed_port_url())
    status, answer, _ = await call(api, "POST", PATH, gizmo("down"))
    if policy == "Ignore":
        assert status == 201 and answer["spec"] == {}  # admitted without the webhooks
        return
    assert (status, answer["reason"]) == (500, "InternalError")
    assert answer["message"].startswith('Internal error occurred: failed calling webhook "mgizmo-v1.kb.io": ')
    assert (await api.get(f"{PATH}/down"))[0] == 404


async def test_a_certificate_the_server_does_not_trust_is_a_failed_call(
    server: TestAPIServer, api: Api, webhooks: Webhooks
) -> None:
    server.install_webhooks(manifests(), url=webhooks.url)  # no caBundle: the self-signed certificate is unknown
    status, answer, _ = await call(api, "POST", PATH, gizmo("untrusted"))
    assert status == 500 and 'failed calling webhook "mgizmo-v1.kb.io"' in answer["message"]
    assert "certificate" in answer["message"].lower()


async def test_object_selector_limits_the_objects_sent(server: TestAPIServer, api: Api, webhooks: Webhooks) -> None:
    install(server, webhooks, object_selector={"matchLabels": {"webhooks": "on"}})
    plain = await api.create_ok(PATH, gizmo("plain"))
    assert plain["spec"] == {}
    chosen = await api.create_ok(PATH, gizmo("chosen", labels={"webhooks": "on"}))
    assert chosen["spec"] == {"size": 1, "image": "gizmo:latest"}
    # On update, the old object's labels count too: removing the label still goes through the webhooks.
    status, error, _ = await call(api, "PATCH", f"{PATH}/chosen", {"metadata": {"labels": None}, "spec": {"size": 50}})
    assert status == 403 and "must be at most 10" in error["message"]


async def test_namespace_selector_limits_the_namespaces(server: TestAPIServer, api: Api, webhooks: Webhooks) -> None:
    install(server, webhooks, namespace_selector={"matchExpressions": [{"key": "hooks", "operator": "Exists"}]})
    await api.create_ok("/api/v1/namespaces", {"metadata": {"name": "hooked", "labels": {"hooks": "yes"}}})
    hooked = await api.create_ok(f"/apis/{GROUP}/v1/namespaces/hooked/gizmos", gizmo("n"))
    assert hooked["spec"]["size"] == 1
    unhooked = await api.create_ok(PATH, gizmo("n"))
    assert unhooked["spec"] == {}


async def test_removing_the_configuration_stops_admission(server: TestAPIServer, api: Api, webhooks: Webhooks) -> None:
    install(server, webhooks)
    for plural, name in (
        ("mutatingwebhookconfigurations", "mutating-webhook-configuration"),
        ("validatingwebhookconfigurations", "validating-webhook-configuration"),
    ):
        assert (await api.delete(f"{CONFIGS}/{plural}/{name}"))[0] == 200
    created = await api.create_ok(PATH, gizmo("free", size=50))
    assert created["spec"] == {"size": 50}


async def test_configurations_are_validated_as_the_api_server_does(api: Api) -> None:
    configuration = manifests()[1]
    hook = configuration["webhooks"][0]
    hook["clientConfig"] = {"url": "http://127.0.0.1:1/validate"}
    hook["sideEffects"] = "Some"
    hook["timeoutSeconds"] = 31
    status, error = await api.post(f"{CONFIGS}/validatingwebhookconfigurations", configuration)
    assert (status, error["reason"]) == (422, "Invalid")
    fields = {cause["field"] for cause in error["details"]["causes"]}
    assert fields == {"webhooks[0].clientConfig.url", "webhooks[0].sideEffects", "webhooks[0].timeoutSeconds"}


async def test_a_configuration_created_through_the_api_is_in_force(
    server: TestAPIServer, api: Api, webhooks: Webhooks
) -> None:
    configuration = manifests()[1]
    configuration["webhooks"][0]["clientConfig"] = {
        "url": webhooks.url + "/validate-hooks-pyop-dev-v1-gizmo",
        "caBundle": base64.b64encode(webhooks.cert.read_bytes()).decode(),
    }
    assert (await api.post(f"{CONFIGS}/validatingwebhookconfigurations", configuration))[0] == 201
    status, _, _ = await call(api, "POST", PATH, gizmo("big", size=11))
    assert status == 403


async def test_webhook_configurations_are_never_sent_to_webhooks(server: TestAPIServer, api: Api) -> None:
    catch_all = manifests()[1]
    catch_all["metadata"]["name"] = "catch-all"
    catch_all["webhooks"][0]["rules"] = [
        {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}
    ]
    server.install_webhooks(catch_all, url=closed_port_url())  # down, and failurePolicy Fail
    assert (await api.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}}))[0] == 500
    status, _ = await api.delete(f"{CONFIGS}/validatingwebhookconfigurations/catch-all")
    assert status == 200  # the configuration itself can still be removed
    assert (await api.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}}))[0] == 201


async def test_the_python_api_bypasses_webhooks(server: TestAPIServer) -> None:
    server.add_crd(gizmo_crd())
    server.install_webhooks(manifests(), url=closed_port_url())
    from pyop.apiserver.registry.operations import WriteOptions

    widgets = server.resources.lookup(GROUP, "v1", "gizmos")
    created = server.operations.create(widgets, "default", gizmo("direct"), WriteOptions())
    assert created["metadata"]["name"] == "direct"


async def test_the_managers_own_client_meets_its_webhooks_through_the_server(
    server: TestAPIServer, webhooks: Webhooks
) -> None:
    """What docs/runtime/webhooks.md shows: typed writes are defaulted, and a denial is the client's 403 error."""
    from pyop.api import ObjectMeta
    from pyop.client import ForbiddenError
    from testing_server.webhook_fixtures import GizmoSpec

    install(server, webhooks)
    client = webhooks.manager.client
    created = await client.create(Gizmo(metadata=ObjectMeta(name="typed", namespace="default")))
    assert created.spec.size == 1
    with pytest.raises(ForbiddenError) as denied:
        await client.create(Gizmo(metadata=ObjectMeta(name="big", namespace="default"), spec=GizmoSpec(size=11)))
    assert 'admission webhook "vgizmo-v1.kb.io" denied the request: spec.size: must be at most 10' in str(denied.value)


def test_install_refuses_a_plain_http_url(server: TestAPIServer) -> None:
    with pytest.raises(ValueError, match="must use https"):
        server.install_webhooks(manifests(), url="http://127.0.0.1:9443")
