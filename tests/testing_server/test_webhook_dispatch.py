"""The API server's side of admission webhooks against scripted webhooks (a local HTTPS server whose answers each
test writes): what is sent (kind, resource, subresource, versions, objects), reinvocation, timeouts, invalid
answers, subresources and match policies."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from pyop.api.status import ApiError
from pyop.apiserver.admission.points import MUTATING, AdmissionPoint
from pyop.manager.certificates import write_self_signed_certificate
from pyop.testing import TestAPIServer
from pyop.testing.webhooks.config import compile_webhooks
from testing_server.helpers import DEPLOY, Api, deployment
from testing_server.webhook_fixtures import GROUP, PATH, gizmo, gizmo_crd

Answer = Callable[[dict[str, Any]], Any]  # request -> response fields (allowed, patch, ...), maybe a coroutine


class ScriptedWebhooks:
    """An HTTPS server answering AdmissionReviews at any path with the script registered for it."""

    def __init__(self, cert_dir: Path) -> None:
        self.cert = cert_dir / "tls.crt"
        self.key = cert_dir / "tls.key"
        self.scripts: dict[str, Answer] = {}
        self.received: dict[str, list[dict[str, Any]]] = {}
        self.url = ""
        self.release = asyncio.Event()  # what a slow webhook waits for; set when the server stops
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/{path:.*}", self._serve)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"https://127.0.0.1:{port}"

    async def stop(self) -> None:
        self.release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _serve(self, request: web.Request) -> web.Response:
        review = await request.json()
        self.received.setdefault(request.path, []).append(review["request"])
        fields = self.scripts[request.path](review["request"])
        if asyncio.iscoroutine(fields):
            fields = await fields
        response = {"uid": review["request"]["uid"], "allowed": True, **fields}
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})

    def configuration(
        self, kind: str, name: str, path: str, rules: list[dict[str, Any]], **hook: Any
    ) -> dict[str, Any]:
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": [
                {
                    "name": f"{name}.hooks.pyop.dev",
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "None",
                    "clientConfig": {
                        "url": self.url + path,
                        "caBundle": base64.b64encode(self.cert.read_bytes()).decode(),
                    },
                    "rules": rules,
                    **hook,
                }
            ],
        }


def rule(resources: list[str], operations: list[str] | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "apiGroups": fields.pop("apiGroups", [GROUP]),
        "apiVersions": fields.pop("apiVersions", ["v1"]),
        "operations": operations or ["CREATE", "UPDATE"],
        "resources": resources,
        **fields,
    }


def json_patch(*operations: dict[str, Any]) -> dict[str, Any]:
    return {"patchType": "JSONPatch", "patch": base64.b64encode(json.dumps(list(operations)).encode()).decode()}


@pytest_asyncio.fixture
async def scripted(server: TestAPIServer, tmp_path: Path) -> AsyncIterator[ScriptedWebhooks]:
    write_self_signed_certificate(tmp_path / "certs", ["127.0.0.1"])
    webhooks = ScriptedWebhooks(tmp_path / "certs")
    await webhooks.start()
    server.add_crd(gizmo_crd())
    try:
        yield webhooks
    finally:
        await webhooks.stop()


MUTATING_KIND = "MutatingWebhookConfiguration"
VALIDATING_KIND = "ValidatingWebhookConfiguration"


async def test_the_review_carries_the_request_as_kube_apiserver_sends_it(
    server: TestAPIServer, api: Api, scripted: ScriptedWebhooks
) -> None:
    scripted.scripts["/v"] = lambda request: {}
    server.install_webhooks(
        scripted.configuration(VALIDATING_KIND, "v", "/v", [rule(["gizmos"], ["*"])]), url=scripted.url
    )
    # install_webhooks keeps the URL's path when the configuration already has a URL, and keeps its caBundle
    created = await api.create_ok(PATH, gizmo("r", size=2), fieldManager="tester")
    await api.delete(f"{PATH}/r")
    create, delete = scripted.received["/v"]
    assert create["kind"] == {"group": GROUP, "version": "v1", "kind": "Gizmo"}
    assert create["resource"] == {"group": GROUP, "version": "v1", "resource": "gizmos"}
    assert create["requestKind"] == create["kind"] and create["requestResource"] == create["resource"]
    assert (create["name"], create["namespace"], create["operation"]) == ("r", "default", "CREATE")
    assert create["userInfo"]["username"] == "pyop-test-admin"
    assert "system:masters" in create["userInfo"]["groups"]
    assert create["object"]["metadata"]["uid"] == created["metadata"]["uid"]
    assert create["oldObject"] is None and create["dryRun"] is False
    assert create["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "tester"}
    assert "subResource" not in create
    assert (delete["operation"], delete["object"]) == ("DELETE", None)
    assert delete["oldObject"]["metadata"]["uid"] == created["metadata"]["uid"]
    assert delete["options"]["kind"] == "DeleteOptions"


@pytest.mark.parametrize(("policy", "calls", "seen"), [("IfNeeded", 2, "yes"), ("Never", 1, "no")])
async def test_reinvocation_calls_an_earlier_webhook_again_after_a_later_change(
    server: TestAPIServer, api: Api, scripted: ScriptedWebhooks, policy: str, calls: int, seen: str
) -> None:
    def first(request: dict[str, Any]) -> dict[str, Any]:
        labels = request["object"]["metadata"].get("labels") or {}
        value = labels.get("second", "no")
        return json_patch({"op": "add", "path": "/metadata/annotations", "value": {"seen-second": value}})

    scripted.scripts["/first"] = first
    scripted.scripts["/second"] = lambda request: json_patch(
        {"op": "add", "path": "/metadata/labels", "value": {"second": "yes"}}
    )
    configurations = [
        scripted.configuration(MUTATING_KIND, "a-first", "/first", [rule(["gizmos"])], reinvocationPolicy=policy),
        scripted.configuration(MUTATING_KIND, "b-second", "/second", [rule(["gizmos"])]),
    ]
    server.install_webhooks(configurations, url=scripted.url)
    created = await api.create_ok(PATH, gizmo("twice"))
    assert created["metadata"]["annotations"] == {"seen-second": seen}
    assert created["metadata"]["labels"] == {"second": "yes"}
    assert len(scripted.received["/first"]) == calls
    assert len(scripted.received["/second"]) == 1


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
async def test_a_webhook_slower_than_its_timeout_is_a_failed_call(
    server: TestAPIServer, api: Api, scripted: ScriptedWebhooks, policy: str
) -> None:
    async def slow(request: dict[str, Any]) -> dict[str, Any]:
        await scripted.release.wait()  # answers only after the test: always later than the 1 s timeout
        return {}

    scripted.scripts["/slow"] = slow
    configuration = scripted.configuration(
        VALIDATING_KIND, "slow", "/slow", [rule(["gizmos"])], timeoutSeconds=1, failurePolicy=policy
    )
    server.install_webhooks(configuration, url=scripted.url)
    status, answer = await api.post(PATH, gizmo("late"))
    if policy == "Ignore":
        assert status == 201
    else:
        assert status == 500 and "context deadline exceeded" in answer["message"]
        assert '?timeout=1s": context deadline exceeded' in answer["message"]


async def test_an_answer_for_another_request_is_a_failed_call(
    server: TestAPIServer, api: Api, scripted: ScriptedWebhooks
) -> None:
    scripted.scripts["/liar"] = lambda request: {"uid": "someone-else"}
    server.install_webhooks(
        scripted.configuration(VALIDATING_KIND, "liar", "/liar", [rule(["gizmos"])]), url=scripted.url
    )
    status, answer = await api.post(PATH, gizmo("x"))
    assert status == 500
    assert 'failed calling webhook "liar.hooks.pyop.dev": received invalid webhook response' in answer["message"]


async def test_a_validating_webhook_may_not_patch(server: TestAPIServer, api: Api, scripted: ScriptedWebhooks) -> None:
    scripted.scripts["/p"] = lambda request: json_patch({"op": "add", "path": "/spec/size", "value": 1})
    server.install_webhooks(scripted.configuration(VALIDATING_KIND, "p", "/p", [rule(["gizmos"])]), url=scripted.url)
    status, answer = await api.post(PATH, gizmo("x"))
    assert status == 500 and "validating webhook may not return response.patch" in answer["message"]


async def test_a_patch_on_delete_is_refused(server: TestAPIServer, api: Api, scripted: ScriptedWebhooks) -> None:
    scripted.scripts["/m"] = lambda request: json_patch({"op": "add", "path": "/spec", "value": {}})
    await api.create_ok(PATH, gizmo("x"))
    server.install_webhooks(
        scripted.configuration(MUTATING_KIND, "m", "/m", [rule(["gizmos"], ["DELETE"])]), url=scripted.url
    )
    status, answer = await api.delete(f"{PATH}/x")
    assert status == 500
    assert 'admission webhook "m.hooks.pyop.dev" attempted to modify the object' in answer["message"]


async def test_a_denial_without_a_status_code_is_a_400(
    server: TestAPIServer, api: Api, scripted: ScriptedWebhooks
) -> None:
    scripted.scripts["/no"] = lambda request: {"allowed": False}
    server.install_webhooks(scripted.configuration(VALIDATING_KIND, "no", "/no", [rule(["gizmos"])]), url=scripted.url)
    status, answer = await api.post(PATH, gizmo("x"))
    assert status == 400
    assert answer["message"] == 'admission webhook "no.hooks.pyop.dev" denied the request without explanation'


async def test_status_writes_match_resource_slash_status_rules_only(
    server: TestAPIServer, api: Api, scripted: ScriptedWebhooks
) -> None:
    scripted.scripts["/status"] = lambda request: {}
    server.install_webhooks(
        scripted.configuration(VALIDATING_KIND, "status", "/status", [rule(["gizmos/status"])]), url=scripted.url
    )
    await api.create_ok(PATH, gizmo("s"))
    assert "/status" not in scripted.received
    status, _ = await api.patch(f"{PATH}/s/status", {"status": {"ready": True}}, "application/merge-patch+json")
    assert status == 200
    (request,) = scripted.received["/status"]
    assert (request["subResource"], request["requestSubResource"], request["operation"]) == (
        "status",
        "status",
        "UPDATE",
    )
    assert request["object"]["status"] == {"ready": True}


async def test_scale_writes_send_scale_objects_and_take_their_patches(
    server: TestAPIServer, api: Api, scripted: ScriptedWebhooks
) -> None:
    scripted.scripts["/scale"] = lambda request: json_patch({"op": "replace", "path": "/spec/replicas", "value": 2})
    configuration = scripted.configuration(
        MUTATING_KIND, "scale", "/scale", [rule(["deployments/scale"], apiGroups=["apps"])]
    )
    server.install_webhooks(configuration, url=scripted.url)
    await api.create_ok(DEPLOY, deployment("web"))
    assert "/scale" not in scripted.received  # the deployment itself is not `deployments/scale`
    status, scale = await api.patch(f"{DEPLOY}/web/scale", {"spec": {"replicas": 5}}, "application/merge-patch+json")
    assert status == 200 and scale["spec"]["replicas"] == 2
    (request,) = scripted.received["/scale"]
    assert request["kind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert request["resource"] == {"group": "apps", "version": "v1", "resource": "deployments"}
    assert request["object"]["spec"]["replicas"] == 5 and request["oldObject"]["spec"]["replicas"] == 1
    _, stored = await api.get(f"{DEPLOY}/web")
    assert stored["spec"]["replicas"] == 2


@pytest.mark.parametrize("match_policy", ["Equivalent", "Exact"])
async def test_match_policy_equivalent_sends_other_versions_as_the_rules_version(
    server: TestAPIServer, api: Api, scripted: ScriptedWebhooks, match_policy: str
) -> None:
    crd = gizmo_crd()
    v2 = {**crd["spec"]["versions"][0], "name": "v2", "storage": False}
    crd["spec"]["versions"].append(v2)
    server.add_crd(crd)
    scripted.scripts["/v1only"] = lambda request: {}
    configuration = scripted.configuration(
        VALIDATING_KIND, "v1only", "/v1only", [rule(["gizmos"])], matchPolicy=match_policy
    )
    server.install_webhooks(configuration, url=scripted.url)
    await api.create_ok(f"/apis/{GROUP}/v2/namespaces/default/gizmos", {**gizmo("two"), "apiVersion": f"{GROUP}/v2"})
    if match_policy == "Exact":
        assert "/v1only" not in scripted.received
        return
    (request,) = scripted.received["/v1only"]
    assert request["kind"]["version"] == "v1" and request["resource"]["version"] == "v1"
    assert request["requestKind"]["version"] == "v2" and request["requestResource"]["version"] == "v2"
    assert request["object"]["apiVersion"] == f"{GROUP}/v1"


async def test_a_namespace_is_selected_by_its_own_labels(
    server: TestAPIServer, api: Api, scripted: ScriptedWebhooks
) -> None:
    scripted.scripts["/ns"] = lambda request: {"allowed": False, "status": {"code": 403, "message": "no"}}
    configuration = scripted.configuration(
        VALIDATING_KIND,
        "ns",
        "/ns",
        [rule(["namespaces"], apiGroups=[""])],
        namespaceSelector={"matchLabels": {"guarded": "true"}},
    )
    server.install_webhooks(configuration, url=scripted.url)
    assert (await api.post("/api/v1/namespaces", {"metadata": {"name": "free"}}))[0] == 201
    status, _ = await api.post("/api/v1/namespaces", {"metadata": {"name": "held", "labels": {"guarded": "true"}}})
    assert status == 403
    (request,) = scripted.received["/ns"]
    assert request["namespace"] == "held"  # a Namespace's request names the namespace itself


async def test_a_dry_run_is_refused_by_a_webhook_with_side_effects(server: TestAPIServer) -> None:
    """sideEffects Some/Unknown cannot be stored through the v1 API (the server refuses them, as kube-apiserver
    does); configurations from before v1 can still have them, so the dispatcher keeps the API server's check."""
    configuration = {
        "metadata": {"name": "old"},
        "webhooks": [
            {
                "name": "old.hooks.pyop.dev",
                "clientConfig": {"url": "https://127.0.0.1:1/never-called"},
                "rules": [rule(["gizmos"])],
                "sideEffects": "Some",
                "admissionReviewVersions": ["v1"],
            }
        ],
    }
    server.webhooks.mutating = compile_webhooks([configuration], mutating=True)
    resource_type = server.resources.lookup("", "v1", "configmaps")
    server.add_crd(gizmo_crd())
    gizmos = server.resources.lookup(GROUP, "v1", "gizmos")
    for target, dry_run in ((gizmos, True), (resource_type, True)):
        point = AdmissionPoint(MUTATING, "CREATE", target, "", "default", "x", gizmo("x"), None, dry_run, None)
        if target is gizmos:
            with pytest.raises(ApiError) as refused:
                await server.webhooks.admit(point, [])
            assert (refused.value.code, refused.value.message) == (
                400,
                'admission webhook "old.hooks.pyop.dev" does not support dry run',
            )
        else:  # not matched by the rules: nothing is called, nothing refused
            assert await server.webhooks.admit(point, []) == point.obj


async def test_a_subresource_wildcard_matches_the_resource_too(
    server: TestAPIServer, api: Api, scripted: ScriptedWebhooks
) -> None:
    """rules.Matcher compares `*` with the subresource whatever it is, the empty one included: `gizmos/*` is
    called for the Gizmo itself as well as for its status."""
    scripted.scripts["/all"] = lambda request: {}
    server.install_webhooks(
        scripted.configuration(VALIDATING_KIND, "all", "/all", [rule(["gizmos/*"])]), url=scripted.url
    )
    await api.create_ok(PATH, gizmo("w"))
    await api.patch(f"{PATH}/w/status", {"status": {"ready": True}}, "application/merge-patch+json")
    assert [request.get("subResource", "") for request in scripted.received["/all"]] == ["", "status"]


async def test_a_write_whose_object_changed_while_webhooks_answered_starts_again(
    server: TestAPIServer, api: Api, scripted: ScriptedWebhooks
) -> None:
    from pyop.apiserver.registry.operations import MERGE_PATCH, WriteOptions

    gizmos = server.resources.lookup(GROUP, "v1", "gizmos")

    def meanwhile(request: dict[str, Any]) -> dict[str, Any]:
        if len(scripted.received["/race"]) == 1:  # another client writes while the first answer is pending
            server.operations.patch(gizmos, "default", "r", MERGE_PATCH, {"spec": {"other": 1}}, WriteOptions())
        return {}

    scripted.scripts["/race"] = meanwhile
    await api.create_ok(PATH, gizmo("r"))
    server.install_webhooks(
        scripted.configuration(VALIDATING_KIND, "race", "/race", [rule(["gizmos"], ["UPDATE"])]), url=scripted.url
    )
    status, patched = await api.patch(f"{PATH}/r", {"spec": {"mine": 2}}, "application/merge-patch+json")
    assert status == 200 and patched["spec"] == {"other": 1, "mine": 2}  # neither write lost
    assert len(scripted.received["/race"]) == 2
