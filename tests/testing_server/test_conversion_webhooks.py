"""Conversion webhooks called by the test API server: a CRD with `conversion.strategy: Webhook` stores v1 and serves
v2 through the webhook on every verb, and a failing webhook gets kube-apiserver's answers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from pyop.api.status import ApiError
from pyop.apiserver.registry import conversion
from pyop.testing import TestAPIServer
from pyop.testing.builtins.kinds import CRD_STORAGE_KEY
from testing_server.conversion_fixtures import (
    GROUP,
    V1,
    V2,
    ConversionServer,
    good_answer,
    start_conversion_server,
    widget,
    widget_crd,
)
from testing_server.helpers import Api

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
FAILED = f"conversion webhook for {GROUP}/v1, Kind=Widget failed: "


@pytest_asyncio.fixture
async def hook(tmp_path: Path) -> AsyncIterator[ConversionServer]:
    server, runner = await start_conversion_server(tmp_path / "certs")
    try:
        yield server
    finally:
        await runner.cleanup()


@pytest_asyncio.fixture
async def served(server: TestAPIServer, hook: ConversionServer) -> ConversionServer:
    """The Widget CRD installed, its conversion webhook at `hook`."""
    server.add_crd(widget_crd(hook.url, hook.ca_pem))
    return hook


def stored(server: TestAPIServer, name: str) -> dict[str, Any]:
    obj = server.store.get(f"widgets.{GROUP}", "default", name)
    assert obj is not None
    return obj


async def create_v1(api: Api, name: str, size: int) -> dict[str, Any]:
    return await api.create_ok(V1, widget(name, "v1", size))


# --- every verb --------------------------------------------------------------------------------------------


async def test_a_create_in_v2_is_stored_in_v1_by_the_webhook_and_answered_in_v2(
    server: TestAPIServer, api: Api, served: ConversionServer
) -> None:
    created = await api.create_ok(V2, widget("a", "v2", 3, labels={"team": "x"}))
    assert created["apiVersion"] == f"{GROUP}/v2" and created["spec"] == {"length": 3}
    assert created["metadata"]["labels"] == {"team": "x"} and created["metadata"]["uid"]
    obj = stored(server, "a")
    assert obj["apiVersion"] == f"{GROUP}/v1" and obj["spec"] == {"size": 3}
    # Encoded in the storage version, then decoded for the answer, as kube-apiserver does.
    assert served.desired_versions == [f"{GROUP}/v1", f"{GROUP}/v2"]
    review = served.reviews[0]
    assert review["apiVersion"] == "apiextensions.k8s.io/v1" and review["kind"] == "ConversionReview"
    assert review["request"]["objects"][0]["spec"] == {"length": 3}


async def test_reads_and_writes_of_the_storage_version_never_call_the_webhook(
    api: Api, served: ConversionServer
) -> None:
    await create_v1(api, "a", 1)
    assert (await api.get(f"{V1}/a"))[0] == 200
    assert (await api.get(V1))[1]["items"][0]["spec"] == {"size": 1}
    status, _ = await api.patch(f"{V1}/a", {"spec": {"size": 2}}, MERGE)
    assert status == 200
    assert served.reviews == []


async def test_get_in_v2_converts_the_stored_object(api: Api, served: ConversionServer) -> None:
    await create_v1(api, "a", 4)
    status, obj = await api.get(f"{V2}/a")
    assert status == 200, obj
    assert obj["apiVersion"] == f"{GROUP}/v2" and obj["spec"] == {"length": 4}
    assert served.desired_versions == [f"{GROUP}/v2"]


async def test_list_in_v2_converts_every_item(api: Api, served: ConversionServer) -> None:
    for index in range(3):
        await create_v1(api, f"w{index}", index)
    status, listed = await api.get(V2)
    assert status == 200, listed
    assert listed["apiVersion"] == f"{GROUP}/v2" and listed["kind"] == "WidgetList"
    assert [item["spec"] for item in listed["items"]] == [{"length": 0}, {"length": 1}, {"length": 2}]
    assert {item["apiVersion"] for item in listed["items"]} == {f"{GROUP}/v2"}
    assert served.desired_versions == [f"{GROUP}/v2"] * 3  # one review per object, as GetList decodes them


async def test_watch_in_v2_converts_every_event(api: Api, served: ConversionServer) -> None:
    await create_v1(api, "before", 1)
    watch = await api.watch(V2)
    try:
        added = await watch.next_of("ADDED")
        assert added["object"]["apiVersion"] == f"{GROUP}/v2" and added["object"]["spec"] == {"length": 1}
        await create_v1(api, "after", 2)
        second = await watch.next_of("ADDED")
        assert second["object"]["metadata"]["name"] == "after" and second["object"]["spec"] == {"length": 2}
        await api.patch(f"{V1}/after", {"spec": {"size": 5}}, MERGE)
        modified = await watch.next_of("MODIFIED")
        assert modified["object"]["spec"] == {"length": 5}
    finally:
        watch.response.close()


async def test_update_in_v2_reads_converted_and_writes_converted(
    server: TestAPIServer, api: Api, served: ConversionServer
) -> None:
    await create_v1(api, "a", 1)
    _, current = await api.get(f"{V2}/a")
    current["spec"]["length"] = 7
    status, updated = await api.put(f"{V2}/a", current)
    assert status == 200, updated
    assert updated["spec"] == {"length": 7} and updated["apiVersion"] == f"{GROUP}/v2"
    assert stored(server, "a")["spec"] == {"size": 7}
    assert updated["metadata"]["generation"] == 2


async def test_an_update_changing_nothing_is_a_no_op_in_every_version(
    server: TestAPIServer, api: Api, served: ConversionServer
) -> None:
    await create_v1(api, "a", 1)
    _, current = await api.get(f"{V2}/a")
    status, updated = await api.put(f"{V2}/a", current)
    assert status == 200, updated
    assert updated["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]
    assert updated["metadata"]["generation"] == 1


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        (MERGE, {"spec": {"length": 9}}),
        (JSON_PATCH, [{"op": "replace", "path": "/spec/length", "value": 9}]),
    ],
)
async def test_a_patch_in_v2_applies_to_the_object_in_v2(
    server: TestAPIServer, api: Api, served: ConversionServer, content_type: str, body: Any
) -> None:
    await create_v1(api, "a", 1)
    status, patched = await api.patch(f"{V2}/a", body, content_type)
    assert status == 200, patched
    assert patched["spec"] == {"length": 9}
    assert stored(server, "a")["spec"] == {"size": 9}


async def test_server_side_apply_in_v2_creates_and_updates_through_the_webhook(
    server: TestAPIServer, api: Api, served: ConversionServer
) -> None:
    status, created = await api.patch(f"{V2}/a", json.dumps(widget("a", "v2", 2)), APPLY, fieldManager="tester")
    assert status == 201, created
    assert created["spec"] == {"length": 2} and stored(server, "a")["spec"] == {"size": 2}
    status, applied = await api.patch(f"{V2}/a", json.dumps(widget("a", "v2", 6)), APPLY, fieldManager="tester")
    assert status == 200, applied
    assert applied["spec"] == {"length": 6} and stored(server, "a")["spec"] == {"size": 6}
    assert applied["metadata"]["managedFields"][0]["apiVersion"] == f"{GROUP}/v2"


async def test_a_status_update_in_v2_keeps_the_spec(server: TestAPIServer, api: Api, served: ConversionServer) -> None:
    await create_v1(api, "a", 3)
    _, current = await api.get(f"{V2}/a")
    current["status"] = {"ready": True}
    status, updated = await api.put(f"{V2}/a/status", current)
    assert status == 200, updated
    assert updated["status"] == {"ready": True} and updated["spec"] == {"length": 3}
    assert stored(server, "a")["spec"] == {"size": 3} and stored(server, "a")["status"] == {"ready": True}


async def test_delete_in_v2_answers_the_converted_object(
    server: TestAPIServer, api: Api, served: ConversionServer
) -> None:
    await create_v1(api, "a", 3)
    status, deleted = await api.delete(f"{V2}/a")
    assert status == 200, deleted
    assert server.store.get(f"widgets.{GROUP}", "default", "a") is None


async def test_a_dry_run_create_is_converted_and_not_stored(
    server: TestAPIServer, api: Api, served: ConversionServer
) -> None:
    status, created = await api.post(V2, widget("a", "v2", 3), dryRun="All")
    assert status == 201, created
    assert created["spec"] == {"length": 3}
    assert server.store.get(f"widgets.{GROUP}", "default", "a") is None
    assert served.desired_versions == [f"{GROUP}/v1", f"{GROUP}/v2"]


async def test_labels_and_annotations_of_the_answer_are_kept_other_metadata_restored(
    server: TestAPIServer, api: Api, served: ConversionServer
) -> None:
    await create_v1(api, "a", 3)

    def relabel(review: dict[str, Any]) -> dict[str, Any]:
        answer = good_answer(review)
        for obj in answer["response"]["convertedObjects"]:
            obj["metadata"]["labels"] = {"converted": "yes"}
            obj["metadata"]["annotations"] = {"by": "webhook"}
            obj["metadata"]["finalizers"] = ["sneaky"]  # not the webhook's to change: restored
        return answer

    served.answer = relabel
    _, obj = await api.get(f"{V2}/a")
    assert obj["metadata"]["labels"] == {"converted": "yes"}
    assert obj["metadata"]["annotations"] == {"by": "webhook"}
    assert "finalizers" not in obj["metadata"]


async def test_v1beta1_reviews_are_sent_when_the_crd_lists_v1beta1_first(
    server: TestAPIServer, api: Api, hook: ConversionServer
) -> None:
    server.add_crd(widget_crd(hook.url, hook.ca_pem, review_versions=("v1beta1", "v1")))
    await create_v1(api, "a", 3)
    status, obj = await api.get(f"{V2}/a")
    assert status == 200, obj
    assert hook.reviews[0]["apiVersion"] == "apiextensions.k8s.io/v1beta1"


async def test_an_admission_webhook_matched_in_another_version_gets_the_object_converted(
    server: TestAPIServer, api: Api, served: ConversionServer
) -> None:
    """matchPolicy Equivalent: a webhook for v1 sees a v2 create in v1 (converted, not relabelled), and its patch
    of v1 comes back into the v2 object."""
    configuration = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "double"},
        "webhooks": [
            {
                "name": "double.conv.pyop.dev",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "clientConfig": {"url": served.url.removesuffix("/convert") + "/mutate"},
                "rules": [
                    {"apiGroups": [GROUP], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["widgets"]}
                ],
            }
        ],
    }
    server.install_webhooks(configuration, url=served.url.removesuffix("/convert"), ca_bundle=served.ca_pem)
    created = await api.create_ok(V2, widget("a", "v2", 3))
    assert served.admitted[0]["apiVersion"] == f"{GROUP}/v1" and served.admitted[0]["spec"] == {"size": 3}
    assert created["spec"] == {"length": 6}
    assert stored(server, "a")["spec"] == {"size": 6}


# --- failures ------------------------------------------------------------------------------------------------


def review_with(**response: Any) -> Any:
    def answer(review: dict[str, Any]) -> dict[str, Any]:
        good = good_answer(review)
        good["response"].update(response)
        return good

    return answer


def converted_with(change: Any) -> Any:
    def answer(review: dict[str, Any]) -> dict[str, Any]:
        good = good_answer(review)
        change(good["response"]["convertedObjects"][0])
        return good

    return answer


async def test_a_webhook_that_is_down_fails_reads_and_writes_with_the_api_servers_500(
    server: TestAPIServer, api: Api, hook: ConversionServer
) -> None:
    closed = "https://127.0.0.1:1/convert"
    server.add_crd(widget_crd(closed, hook.ca_pem))
    await create_v1(api, "a", 1)  # the storage version needs no conversion
    status, error = await api.get(f"{V2}/a")
    assert status == 500 and error["reason"] == "InternalError"
    assert error["message"].startswith(FAILED + f'Post "{closed}?timeout=30s": ')
    status, error = await api.post(V2, widget("b", "v2", 1))
    assert status == 500
    assert error["message"].startswith(f"conversion webhook for {GROUP}/v2, Kind=Widget failed: Post ")
    assert server.store.get(f"widgets.{GROUP}", "default", "b") is None  # nothing stored
    status, error = await api.get(V2)
    assert status == 500 and error["message"].startswith(FAILED)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (review_with(result={"status": "Failure", "message": "size 1 has no v2 form"}), "size 1 has no v2 form"),
        (review_with(result={"status": "Failure"}), "response.result.status was 'Failure', not 'Success'"),
        (review_with(uid="someone-else"), 'expected response.uid="'),
        (lambda review: {**good_answer(review), "kind": "AdmissionReview"}, "expected webhook response of"),
        (lambda review: {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}, "no response provided"),
        (lambda review: web.Response(status=500, text="boom"), "an error on the server ('boom')"),
        (lambda review: web.Response(text="not json"), "the response is not JSON"),
    ],
)
async def test_a_webhook_answering_a_failure_or_nonsense_fails_the_request(
    api: Api, served: ConversionServer, answer: Any, reason: str
) -> None:
    await create_v1(api, "a", 1)
    served.answer = answer
    status, error = await api.get(f"{V2}/a")
    assert status == 500, error
    assert error["message"].startswith(FAILED) and reason in error["message"], error["message"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda obj: obj.update(apiVersion=f"{GROUP}/v1"),
            f"returned invalid object at index 0: invalid groupVersion (expected {GROUP}/v2, received {GROUP}/v1)",
        ),
        (lambda obj: obj.update(kind="Gadget"), "invalid kind (expected Widget, received Gadget)"),
        (
            lambda obj: obj["metadata"].update(name="other"),
            "returned invalid object: must have the same name: a != other",
        ),
        (lambda obj: obj["metadata"].update(uid="x"), "must have the same uid"),
        (lambda obj: obj["metadata"].update(labels={"n": 1}), "invalid metadata: metadata.labels[n] must be a string"),
    ],
)
async def test_a_converted_object_that_is_not_the_object_in_the_desired_version_fails(
    api: Api, served: ConversionServer, change: Any, message: str
) -> None:
    await create_v1(api, "a", 1)
    served.answer = converted_with(change)
    status, error = await api.get(f"{V2}/a")
    assert status == 500, error
    assert error["message"].startswith(f"conversion webhook for {GROUP}/v1, Kind=Widget ")
    assert message in error["message"], error["message"]


async def test_no_objects_back_fails(api: Api, served: ConversionServer) -> None:
    await create_v1(api, "a", 1)
    served.answer = review_with(convertedObjects=[])
    status, error = await api.get(f"{V2}/a")
    assert status == 500
    assert error["message"] == f"conversion webhook for {GROUP}/v1, Kind=Widget failed, no objects returned"


async def test_a_slow_webhook_times_out(api: Api, served: ConversionServer, monkeypatch: pytest.MonkeyPatch) -> None:
    await create_v1(api, "a", 1)
    monkeypatch.setattr(conversion, "WEBHOOK_TIMEOUT", 0.2)
    served.delay = 2.0
    status, error = await api.get(f"{V2}/a")
    assert status == 500
    assert error["message"].startswith(FAILED) and error["message"].endswith("context deadline exceeded")


async def test_a_certificate_not_signed_by_the_ca_bundle_is_refused(
    server: TestAPIServer, api: Api, hook: ConversionServer, tmp_path: Path
) -> None:
    other, other_runner = await start_conversion_server(tmp_path / "other")
    await other_runner.cleanup()
    server.add_crd(widget_crd(hook.url, other.ca_pem))  # trusts another CA
    await create_v1(api, "a", 1)
    status, error = await api.get(f"{V2}/a")
    assert status == 500 and error["message"].startswith(FAILED)
    assert "certificate" in error["message"].lower()
    assert hook.reviews == []


async def test_a_failing_conversion_ends_a_watch_with_an_error_event(api: Api, served: ConversionServer) -> None:
    await create_v1(api, "a", 1)
    served.answer = review_with(result={"status": "Failure", "message": "no"})
    watch = await api.watch(V2)
    try:
        event = await watch.next()
        assert event is not None and event["type"] == "ERROR"
        assert event["object"]["code"] == 500 and event["object"]["message"] == FAILED + "no"
        assert await watch.next() is None
    finally:
        watch.response.close()


async def test_a_service_reference_must_be_pointed_at_a_local_server(
    server: TestAPIServer, api: Api, hook: ConversionServer
) -> None:
    server.add_crd(widget_crd(service=True))
    await create_v1(api, "a", 1)
    status, error = await api.get(f"{V2}/a")
    assert status == 500
    assert error["message"].startswith(FAILED + 'service "system/webhook-service" cannot be reached')
    # install_webhooks points it at the local server, as envtest does for the CRDs it installs.
    assert server.install_webhooks([], url=hook.url.removesuffix("/convert"), ca_bundle=hook.ca_pem) == [
        f"widgets.{GROUP}"
    ]
    crd = server.store.get(CRD_STORAGE_KEY, "", f"widgets.{GROUP}")
    assert crd is not None
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"] == hook.url
    status, obj = await api.get(f"{V2}/a")
    assert status == 200 and obj["spec"] == {"length": 1}


async def test_outside_a_request_a_conversion_is_refused_clearly(
    server: TestAPIServer, served: ConversionServer
) -> None:
    from pyop.apiserver.registry.operations import WriteOptions

    v1 = server.resources.lookup(GROUP, "v1", "widgets")
    v2 = server.resources.lookup(GROUP, "v2", "widgets")
    server.operations.create(v1, "default", widget("a", "v1", 1), WriteOptions())
    with pytest.raises(ApiError) as raised:
        server.operations.get(v2, "default", "a")
    assert raised.value.code == 500 and "outside of a request" in raised.value.message


# --- the CRD's conversion section --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conversion_section", "field", "message"),
    [
        ({"strategy": "Magic"}, "spec.conversion.strategy", 'Unsupported value: "Magic"'),
        ({"strategy": "Webhook"}, "spec.conversion.webhook", "required when strategy is set to Webhook"),
        (
            {"strategy": "None", "webhook": {"clientConfig": {"url": "https://x"}}},
            "spec.conversion.webhook",
            "should not be set when strategy is not set to Webhook",
        ),
        (
            {
                "strategy": "Webhook",
                "webhook": {"clientConfig": {"url": "https://x"}, "conversionReviewVersions": ["v2"]},
            },
            "spec.conversion.webhook.conversionReviewVersions",
            "must include at least one of v1, v1beta1",
        ),
        (
            {
                "strategy": "Webhook",
                "webhook": {"clientConfig": {"url": "http://x"}, "conversionReviewVersions": ["v1"]},
            },
            "spec.conversion.webhook.clientConfig.url",
            "'https' is the only allowed URL scheme",
        ),
        (
            {"strategy": "Webhook", "webhook": {"clientConfig": {}, "conversionReviewVersions": ["v1"]}},
            "spec.conversion.webhook.clientConfig",
            "exactly one of url or service is required",
        ),
    ],
)
async def test_an_invalid_conversion_section_is_refused(
    api: Api, conversion_section: dict[str, Any], field: str, message: str
) -> None:
    crd = widget_crd("https://127.0.0.1:1/convert")
    crd["spec"]["conversion"] = conversion_section
    status, error = await api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status == 422, error
    causes = error["details"]["causes"]
    assert any(cause["field"] == field and message in cause["message"] for cause in causes), causes
