"""AdmissionReviews POSTed over HTTPS to a running manager's webhook server: defaulting patches, validation
verdicts and warnings, update/delete objects, and malformed requests."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import pytest_asyncio
from webhook_helpers import (
    Gadget,
    GadgetDefaulter,
    GadgetValidator,
    admission_review,
    decoded_patch,
    gadget,
    post,
    webhook_manager,
)

from pyop.manager import Manager
from pyop.testing import TestAPIServer

MUTATE = "/mutate-hooks-pyop-dev-v1-gadget"
VALIDATE = "/validate-hooks-pyop-dev-v1-gadget"


class Hooks:
    def __init__(self, manager: Manager, cert_dir: Path, defaulter: GadgetDefaulter, validator: GadgetValidator):
        self.manager = manager
        self.cert_dir = cert_dir
        self.defaulter = defaulter
        self.validator = validator

    async def review(self, path: str, review: dict[str, Any]) -> dict[str, Any]:
        status, answer = await post(self.manager, path, review, self.cert_dir)
        assert status == 200, answer
        assert answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview"
        assert answer["response"]["uid"] == review["request"]["uid"]
        response: dict[str, Any] = answer["response"]
        return response


@pytest_asyncio.fixture
async def hooks(server: TestAPIServer, cert_dir: Path) -> AsyncIterator[Hooks]:
    manager = webhook_manager(server, cert_dir)
    defaulter, validator = GadgetDefaulter(), GadgetValidator()
    manager.webhook_for(Gadget).with_defaulter(defaulter).with_validator(validator).complete()
    async with manager:
        yield Hooks(manager, cert_dir, defaulter, validator)


async def test_the_defaulting_patch_turns_the_raw_object_into_the_defaulted_one_keeping_unknown_fields(
    hooks: Hooks,
) -> None:
    raw = gadget(ports=[{"name": "http", "protocol": "TCP"}, {"name": "metrics", "containerPort": 9090}])
    raw["spec"]["futureField"] = {"nested": [1, 2]}  # a field a newer CRD version has and the model lacks
    raw["status"] = {"phase": "Pending"}
    raw["metadata"]["annotations"] = {"kept": "yes"}
    response = await hooks.review(MUTATE, admission_review("CREATE", raw))

    assert response["allowed"] is True and response["status"]["code"] == 200
    patch = decoded_patch(response)
    assert all(operation["op"] != "remove" for operation in patch), patch
    patched = jsonpatch.apply_patch(copy.deepcopy(raw), patch)
    expected = copy.deepcopy(raw)
    expected["spec"].update(size=1, image="gadget:latest")
    expected["spec"]["ports"][0]["containerPort"] = 8080
    expected["metadata"]["labels"] = {"defaulted": "true"}
    assert patched == expected


async def test_a_defaulter_that_changes_nothing_sends_no_patch(hooks: Hooks) -> None:
    raw = gadget(size=3, image="mine:1")
    raw["metadata"]["labels"] = {"defaulted": "true"}
    response = await hooks.review(MUTATE, admission_review("UPDATE", raw, raw))
    assert response == {"uid": response["uid"], "allowed": True, "status": {"code": 200}}
    assert hooks.defaulter.calls == 1


@pytest.mark.parametrize(
    ("annotation", "status"),
    [
        ("refuse", {"code": 403, "reason": "Forbidden", "message": "refused while defaulting"}),
        ("explode", {"code": 500, "message": "'spec'"}),
    ],
)
async def test_a_defaulter_can_deny_and_its_failures_are_internal_errors(
    hooks: Hooks, annotation: str, status: dict[str, Any]
) -> None:
    raw = gadget()
    raw["metadata"]["annotations"] = {annotation: "1"}
    response = await hooks.review(MUTATE, admission_review("CREATE", raw))
    assert response["allowed"] is False and response["status"] == status and "patch" not in response


async def test_delete_is_allowed_without_calling_the_defaulter(hooks: Hooks) -> None:
    response = await hooks.review(MUTATE, admission_review("DELETE", None, gadget()))
    assert response["allowed"] is True and "patch" not in response
    assert hooks.defaulter.calls == 0


async def test_validation_allows_with_warnings_and_denies_with_the_message(hooks: Hooks) -> None:
    allowed = await hooks.review(VALIDATE, admission_review("CREATE", gadget(size=3)))
    assert allowed["allowed"] is True and allowed["status"] == {"code": 200} and "warnings" not in allowed

    warned = await hooks.review(VALIDATE, admission_review("CREATE", gadget(size=7)))
    assert warned["allowed"] is True and warned["warnings"] == ["sizes above 5 are slow"]

    denied = await hooks.review(VALIDATE, admission_review("CREATE", gadget(size=11)))
    assert denied["allowed"] is False
    assert denied["status"] == {"code": 403, "reason": "Forbidden", "message": "spec.size: must be at most 10"}
    assert denied["warnings"] == ["sizes above 5 are slow"]
    created = hooks.validator.seen[0]
    assert created[0] == "create" and isinstance(created[1], Gadget) and created[1].spec.size == 3


async def test_update_gets_the_old_and_the_new_object(hooks: Hooks) -> None:
    old, new = gadget(size=1, image="a:1"), gadget(size=2, image="a:1")
    response = await hooks.review(VALIDATE, admission_review("UPDATE", new, old))
    assert response["allowed"] is True
    operation, (seen_old, seen_new) = hooks.validator.seen[-1]
    assert operation == "update" and (seen_old.spec.size, seen_new.spec.size) == (1, 2)

    changed = await hooks.review(VALIDATE, admission_review("UPDATE", gadget(image="b:2"), old))
    assert changed["allowed"] is False
    assert changed["status"] == {"code": 422, "reason": "Invalid", "message": "spec.image: field is immutable"}


async def test_delete_validates_the_object_sent_as_old_object(hooks: Hooks) -> None:
    protected = gadget("keep")
    protected["metadata"]["labels"] = {"protected": "true"}
    denied = await hooks.review(VALIDATE, admission_review("DELETE", None, protected))
    assert denied["allowed"] is False and denied["status"]["message"] == "keep is protected"
    operation, seen = hooks.validator.seen[-1]
    assert operation == "delete" and seen.metadata.name == "keep"

    allowed = await hooks.review(VALIDATE, admission_review("DELETE", None, gadget("go")))
    assert allowed["allowed"] is True


async def test_an_exception_in_the_validator_is_an_internal_error(hooks: Hooks) -> None:
    raw = gadget()
    raw["metadata"]["annotations"] = {"explode": "1"}
    response = await hooks.review(VALIDATE, admission_review("CREATE", raw))
    assert response["allowed"] is False
    assert response["status"] == {"code": 500, "message": "the validator broke"}


async def test_the_validator_sees_the_request_it_handles(hooks: Hooks) -> None:
    raw = gadget()
    raw["metadata"]["annotations"] = {"want-dry-run": "1"}
    response = await hooks.review(VALIDATE, admission_review("CREATE", raw, dry_run=True))
    assert response["warnings"] == ["dry run: True"]


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (b"{not json", "application/json", "not JSON"),
        (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}', "application/json", "no request"),
        (b'{"kind": "ConversionReview", "request": {}}', "application/json", "not an AdmissionReview"),
        (b"{}", "text/plain", "expected application/json"),
    ],
)
async def test_a_malformed_review_is_answered_with_code_400(
    hooks: Hooks, body: bytes, content_type: str, message: str
) -> None:
    status, answer = await post(hooks.manager, VALIDATE, body, hooks.cert_dir, content_type=content_type)
    assert status == 200  # the verdict is in the body, as controller-runtime answers
    response = answer["response"]
    assert response["allowed"] is False and response["status"]["code"] == 400
    assert message in response["status"]["message"]


async def test_objects_that_do_not_fit_the_model_and_unknown_operations_are_bad_requests(hooks: Hooks) -> None:
    wrong_type = await hooks.review(VALIDATE, admission_review("CREATE", gadget(size="eleven")))
    assert wrong_type["allowed"] is False and wrong_type["status"]["code"] == 400
    assert "not a valid Gadget" in wrong_type["status"]["message"]

    connect = await hooks.review(VALIDATE, admission_review("CONNECT", gadget()))
    assert connect["status"] == {"code": 400, "message": "unknown operation 'CONNECT'"}

    missing = await hooks.review(MUTATE, admission_review("CREATE", None))
    assert missing["allowed"] is False and missing["status"] == {"code": 400, "message": "request.object is missing"}
    assert hooks.validator.seen == [] and hooks.defaulter.calls == 0


async def test_unknown_paths_are_404_and_other_methods_405(hooks: Hooks) -> None:
    status, _ = await post(
        hooks.manager, "/validate-other-v1-thing", admission_review("CREATE", gadget()), hooks.cert_dir
    )
    assert status == 404
    status, _ = await post(hooks.manager, VALIDATE, b"", hooks.cert_dir, method="GET")
    assert status == 405


async def test_requests_are_counted_and_timed_per_webhook_as_controller_runtime_names_them(hooks: Hooks) -> None:
    for size in (1, 11):
        await hooks.review(VALIDATE, admission_review("CREATE", gadget(size=size)))
    await hooks.review(MUTATE, admission_review("CREATE", gadget()))
    metrics = hooks.manager.metrics
    assert metrics.value("controller_runtime_webhook_requests_total", {"webhook": VALIDATE, "code": "200"}) == 2
    assert metrics.value("controller_runtime_webhook_requests_total", {"webhook": MUTATE, "code": "200"}) == 1
    assert metrics.value("controller_runtime_webhook_latency_seconds_count", {"webhook": VALIDATE}) == 2
    assert metrics.value("controller_runtime_webhook_requests_in_flight", {"webhook": VALIDATE}) == 0


async def test_a_body_over_the_size_limit_is_refused(hooks: Hooks) -> None:
    raw = gadget()
    raw["metadata"]["annotations"] = {"huge": "x" * (7 * 1024 * 1024)}
    status, text = await post(hooks.manager, VALIDATE, admission_review("CREATE", raw), hooks.cert_dir)
    assert status == 413 and "limited" in text
    assert hooks.validator.seen == []
    counted = hooks.manager.metrics.value(
        "controller_runtime_webhook_requests_total", {"webhook": VALIDATE, "code": "413"}
    )
    assert counted == 1
