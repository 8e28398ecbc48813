"""Fault injection: closed, stalled and expired watches, delays and injected error responses."""

from __future__ import annotations

import asyncio

import pytest

from pyop.testing import TestAPIServer
from testing_server.helpers import CM, Api, configmap, eventually


async def test_close_watches_ends_open_streams_of_a_resource(server: TestAPIServer, api: Api) -> None:
    configmaps = await api.watch(CM)
    secrets = await api.watch("/api/v1/namespaces/default/secrets")
    await api.create_ok(CM, configmap("a"))
    assert (await configmaps.next())["type"] == "ADDED"  # type: ignore[index]
    assert server.faults.close_watches("configmaps") == 1
    assert await configmaps.rest() == []
    await api.create_ok("/api/v1/namespaces/default/secrets", {"metadata": {"name": "s"}})
    assert (await secrets.next())["object"]["metadata"]["name"] == "s"  # type: ignore[index]
    assert server.faults.close_watches() == 1
    assert await secrets.rest() == []


async def test_compact_makes_watches_from_older_versions_expire(server: TestAPIServer, api: Api) -> None:
    created = await api.create_ok(CM, configmap("a"))
    server.faults.compact()
    watch = await api.watch(CM, resourceVersion=created["metadata"]["resourceVersion"])
    (event,) = await watch.rest()
    assert event["type"] == "ERROR" and event["object"]["reason"] == "Expired"
    status, listed = await api.get(CM)
    current = await api.watch(CM, resourceVersion=listed["metadata"]["resourceVersion"])
    await api.create_ok(CM, configmap("b"))
    assert (await current.next())["type"] == "ADDED"  # type: ignore[index]
    current.close()


async def test_stalled_watch_stays_open_and_sends_nothing(server: TestAPIServer, api: Api) -> None:
    stalled = await api.watch(CM, allowWatchBookmarks="true")
    await api.create_ok(CM, configmap("before"))
    assert (await stalled.next_of("ADDED"))["object"]["metadata"]["name"] == "before"
    server.faults.stall_watches("configmaps")
    await api.create_ok(CM, configmap("during"))
    healthy = await api.watch(CM, allowWatchBookmarks="true", resourceVersion="0")
    names = {(await healthy.next_of("ADDED"))["object"]["metadata"]["name"] for _ in range(2)}
    assert names == {"before", "during"}
    await healthy.next_of("BOOKMARK")  # bookmarks flow on the new stream meanwhile
    healthy.close()
    assert server.faults.close_watches("configmaps") >= 1
    remaining = await stalled.rest()
    assert [event for event in remaining if event["type"] != "BOOKMARK"] == []
    # bookmarks written before the stall took effect may remain; none carry the new object
    assert all(event["type"] == "BOOKMARK" for event in remaining)


async def test_delay_holds_matching_requests_back(server: TestAPIServer, api: Api) -> None:
    await api.create_ok(CM, configmap("slow"))
    await api.create_ok(CM, configmap("fast"))
    server.faults.delay(1.0, method="GET", path_regex="/slow$", times=1)
    finished: list[str] = []

    async def fetch(name: str) -> None:
        status, _ = await api.get(f"{CM}/{name}")
        assert status == 200
        finished.append(name)

    slow = asyncio.create_task(fetch("slow"))
    await asyncio.sleep(0)  # the slow request is sent first
    await fetch("fast")
    await slow
    assert finished == ["fast", "slow"]
    await fetch("slow")  # times=1: the rule is used up
    assert finished[-1] == "slow"


@pytest.mark.parametrize(
    ("code", "reason"),
    [(409, "Conflict"), (429, "TooManyRequests"), (500, "InternalError"), (503, "ServiceUnavailable")],
)
async def test_respond_injects_error_status(server: TestAPIServer, api: Api, code: int, reason: str) -> None:
    await api.create_ok(CM, configmap("a"))
    server.faults.respond(code, method="GET", path_regex="configmaps/a", times=1)
    status, error = await api.get(f"{CM}/a")
    assert status == code
    assert error["kind"] == "Status" and error["reason"] == reason and error["code"] == code
    status, _ = await api.get(f"{CM}/a")
    assert status == 200


async def test_respond_429_carries_retry_after(server: TestAPIServer, api: Api) -> None:
    server.faults.respond(429, path_regex="configmaps", times=None, retry_after=7)
    for _ in range(2):
        async with api.session.get(CM) as response:
            assert response.status == 429
            assert response.headers["Retry-After"] == "7"
            assert (await response.json())["details"]["retryAfterSeconds"] == 7
    server.faults.clear()
    status, _ = await api.get(CM)
    assert status == 200


async def test_respond_matches_method_and_watch_requests(server: TestAPIServer, api: Api) -> None:
    server.faults.respond(503, method="POST", times=1)
    status, _ = await api.get(CM)
    assert status == 200
    status, error = await api.post(CM, configmap("a"))
    assert status == 503
    server.faults.respond(500, path_regex="watch=true", times=1)
    async with api.session.get(CM, params={"watch": "true"}) as response:
        assert response.status == 500


async def test_abandoned_watch_is_released(server: TestAPIServer, api: Api) -> None:
    watch = await api.watch(CM)
    await api.create_ok(CM, configmap("a"))
    assert (await watch.next())["type"] == "ADDED"  # type: ignore[index]
    watch.close()

    async def released() -> bool:
        return server.faults.close_watches() == 0

    await eventually(released, "server noticed the client went away")
