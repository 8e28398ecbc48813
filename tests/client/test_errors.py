"""Each API failure maps to its own exception type; throttling and Retry-After are honoured, boundedly."""

from __future__ import annotations

import pytest
from client_helpers import RecordingSleep, Widget, widget

from pyop.client import (
    AlreadyExistsError,
    ApiConnectionError,
    ApiError,
    BadRequestError,
    Client,
    ClientConfig,
    ConflictError,
    ForbiddenError,
    GoneError,
    InternalServerError,
    InvalidError,
    NotFoundError,
    PatchType,
    ServerError,
    ServiceUnavailableError,
    TooManyRequestsError,
    Transport,
    UnauthorizedError,
    UnsupportedMediaTypeError,
)
from pyop.client.errors import MethodNotAllowedError, error_from_status
from pyop.testing import TestAPIServer


def status(code: int, reason: str, **details: object) -> dict[str, object]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": f"{reason} happened",
        "reason": reason,
        "details": details,
        "code": code,
    }


@pytest.mark.parametrize(
    ("code", "reason", "expected"),
    [
        (400, "BadRequest", BadRequestError),
        (401, "Unauthorized", UnauthorizedError),
        (403, "Forbidden", ForbiddenError),
        (404, "NotFound", NotFoundError),
        (405, "MethodNotAllowed", MethodNotAllowedError),
        (409, "AlreadyExists", AlreadyExistsError),
        (409, "Conflict", ConflictError),
        (410, "Gone", GoneError),
        (410, "Expired", GoneError),
        (415, "UnsupportedMediaType", UnsupportedMediaTypeError),
        (422, "Invalid", InvalidError),
        (429, "TooManyRequests", TooManyRequestsError),
        (500, "InternalError", InternalServerError),
        (503, "ServiceUnavailable", ServiceUnavailableError),
        (502, "", ServerError),
    ],
)
def test_status_maps_to_exception_type(code: int, reason: str, expected: type[ApiError]) -> None:
    error = error_from_status(code, status(code, reason, name="w1", kind="Widget"))
    assert type(error) is expected
    assert error.code == code and error.details["name"] == "w1"
    assert isinstance(error, ApiError)


def test_non_status_body_still_maps_by_code() -> None:
    error = error_from_status(404, "404 page not found")
    assert isinstance(error, NotFoundError) and error.message == "404 page not found"
    assert isinstance(error_from_status(418, {"unexpected": True}), ApiError)


async def test_not_found_and_already_exists(client: Client) -> None:
    with pytest.raises(NotFoundError) as caught:
        await client.get(Widget, "missing", "default")
    assert caught.value.reason == "NotFound" and caught.value.details.get("name") == "missing"
    await client.create(widget("w1"))
    with pytest.raises(AlreadyExistsError) as exists:
        await client.create(widget("w1"))
    assert exists.value.code == 409 and exists.value.reason == "AlreadyExists"


async def test_invalid_reports_field_causes(client: Client) -> None:
    with pytest.raises(InvalidError) as caught:
        await client.create(widget("w1", replicas=-1))
    error = caught.value
    assert error.code == 422
    assert any(cause.field == "spec.replicas" for cause in error.causes), error.causes


async def test_gone_when_continue_token_expired(client: Client, server: TestAPIServer) -> None:
    for i in range(3):
        await client.create(widget(f"w{i}"))
    page = await client.list(Widget, "default", limit=1)
    server.faults.compact()
    with pytest.raises(GoneError) as caught:
        await client.list(Widget, "default", limit=1, continue_token=page.continue_token)
    assert caught.value.code == 410


async def test_unsupported_media_type_for_strategic_patch_on_custom_resource(client: Client) -> None:
    await client.create(widget("w1"))
    with pytest.raises(UnsupportedMediaTypeError):
        await client.patch(Widget, "w1", {"spec": {"replicas": 1}}, "default", patch_type=PatchType.STRATEGIC)


async def test_unauthorized_with_a_wrong_token(server: TestAPIServer) -> None:
    async with Client(server.client_config(token="wrong")) as client:
        with pytest.raises(UnauthorizedError):
            await client.get(Widget, "w1", "default")


async def test_forbidden_conflict_and_server_errors_are_distinct(client: Client, server: TestAPIServer) -> None:
    await client.create(widget("w1"))
    server.faults.respond(403, method="GET", path_regex="widgets/w1")
    with pytest.raises(ForbiddenError):
        await client.get(Widget, "w1", "default")
    server.faults.respond(409, method="PATCH", path_regex="widgets/w1")
    with pytest.raises(ConflictError):
        await client.apply(widget("w1", color="x"), field_manager="bob")
    server.faults.respond(500, method="GET", path_regex="widgets/w1")
    with pytest.raises(InternalServerError):
        await client.get(Widget, "w1", "default")
    # Each fault fired once; the object is still there.
    assert (await client.get(Widget, "w1", "default")).metadata.name == "w1"


async def test_too_many_requests_is_retried_with_retry_after(
    client: Client, server: TestAPIServer, sleeps: RecordingSleep
) -> None:
    await client.create(widget("w1"))
    server.faults.respond(429, method="GET", path_regex="widgets/w1", times=2, retry_after=3)
    fetched = await client.get(Widget, "w1", "default")
    assert fetched.metadata.name == "w1"
    assert sleeps.waits == [3, 3]


async def test_too_many_requests_gives_up_after_bounded_retries(
    client: Client, server: TestAPIServer, sleeps: RecordingSleep
) -> None:
    server.faults.respond(429, method="POST", times=None, retry_after=1)
    with pytest.raises(TooManyRequestsError):
        await client.create(widget("w1"))
    assert len(sleeps.waits) == client.transport.max_retries
    server.faults.clear()
    with pytest.raises(NotFoundError):  # nothing was created by the throttled attempts
        await client.get(Widget, "w1", "default")


async def test_server_errors_retry_only_with_retry_after(
    client: Client, server: TestAPIServer, sleeps: RecordingSleep
) -> None:
    await client.create(widget("w1"))
    server.faults.respond(503, method="GET", path_regex="widgets/w1", times=1, retry_after=2)
    assert (await client.get(Widget, "w1", "default")).metadata.name == "w1"
    assert sleeps.waits == [2]
    server.faults.respond(503, method="GET", path_regex="widgets/w1", times=1)
    with pytest.raises(ServiceUnavailableError):
        await client.get(Widget, "w1", "default")
    assert sleeps.waits == [2]


async def test_retry_wait_is_capped(server: TestAPIServer) -> None:
    sleeps = RecordingSleep()
    transport = Transport(server.client_config(), sleep=sleeps, max_retry_wait=5)
    async with Client(transport) as client:
        server.faults.respond(429, method="GET", times=1, retry_after=600)
        with pytest.raises(NotFoundError):
            await client.get(Widget, "w1", "default")
    assert sleeps.waits == [5]


async def test_connection_refused_is_a_connection_error(server: TestAPIServer) -> None:
    url = server.url
    await server.stop()
    async with Client(ClientConfig(server=url, token="t")) as client:
        with pytest.raises(ApiConnectionError):
            await client.get(Widget, "w1", "default")
