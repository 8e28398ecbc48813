"""Pagination, watch from a resourceVersion, synthetic ADDED, bookmarks, expiry and timeouts."""

from __future__ import annotations

import aiohttp

from pyop.testing import TestAPIServer
from testing_server.helpers import CM, Api, configmap, connector

MERGE = "application/merge-patch+json"


async def test_pagination_with_continue_is_a_consistent_snapshot(api: Api) -> None:
    for index in range(7):
        await api.create_ok(CM, configmap(f"cm-{index}"))
    status, first = await api.get(CM, limit="3")
    assert [item["metadata"]["name"] for item in first["items"]] == ["cm-0", "cm-1", "cm-2"]
    assert first["metadata"]["remainingItemCount"] == 4
    snapshot_rv = first["metadata"]["resourceVersion"]
    await api.create_ok(CM, configmap("cm-00-late"))
    await api.delete(f"{CM}/cm-5")
    names = [item["metadata"]["name"] for item in first["items"]]
    page = first
    while page["metadata"].get("continue"):
        status, page = await api.get(CM, limit="3", **{"continue": page["metadata"]["continue"]})
        assert status == 200
        assert page["metadata"]["resourceVersion"] == snapshot_rv
        names += [item["metadata"]["name"] for item in page["items"]]
    assert names == [f"cm-{index}" for index in range(7)]


async def test_malformed_continue_token_is_a_bad_request(api: Api) -> None:
    status, error = await api.get(CM, limit="1", **{"continue": "not base64 json"})
    assert status == 400


async def test_watch_from_resource_version_sends_only_later_events(api: Api) -> None:
    await api.create_ok(CM, configmap("before"))
    status, listed = await api.get(CM)
    watch = await api.watch(CM, resourceVersion=listed["metadata"]["resourceVersion"])
    created = await api.create_ok(CM, configmap("after"))
    await api.patch(f"{CM}/before", {"data": {"k": "x"}}, MERGE)
    await api.delete(f"{CM}/after")
    events = [await watch.next() for _ in range(3)]
    watch.close()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [  # type: ignore[index]
        ("ADDED", "after"),
        ("MODIFIED", "before"),
        ("DELETED", "after"),
    ]
    assert events[0]["object"]["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]  # type: ignore[index]
    assert events[0]["object"]["kind"] == "ConfigMap"  # type: ignore[index]


async def test_watch_replays_history_between_its_resource_version_and_now(api: Api) -> None:
    first = await api.create_ok(CM, configmap("one"))
    await api.create_ok(CM, configmap("two"))
    await api.create_ok(CM, configmap("three"))
    watch = await api.watch(CM, resourceVersion=first["metadata"]["resourceVersion"])
    events = [await watch.next() for _ in range(2)]
    watch.close()
    assert [e["object"]["metadata"]["name"] for e in events] == ["two", "three"]  # type: ignore[index]


async def test_watch_without_resource_version_starts_with_synthetic_added(api: Api) -> None:
    await api.create_ok(CM, configmap("a"))
    await api.create_ok(CM, configmap("b"))
    for params in ({}, {"resourceVersion": "0"}):
        watch = await api.watch(CM, **params)
        events = [await watch.next() for _ in range(2)]
        watch.close()
        assert {(e["type"], e["object"]["metadata"]["name"]) for e in events} == {  # type: ignore[index]
            ("ADDED", "a"),
            ("ADDED", "b"),
        }


async def test_bookmarks_carry_the_current_resource_version(api: Api) -> None:
    await api.create_ok(CM, configmap("a"))
    other = await api.create_ok("/api/v1/namespaces/default/secrets", {"metadata": {"name": "s"}})
    watch = await api.watch(CM, resourceVersion="0", allowWatchBookmarks="true")
    assert (await watch.next_of("ADDED", "MODIFIED"))["object"]["metadata"]["name"] == "a"
    bookmark = await watch.next_of("BOOKMARK")
    watch.close()
    assert bookmark["object"]["kind"] == "ConfigMap"
    assert int(bookmark["object"]["metadata"]["resourceVersion"]) >= int(other["metadata"]["resourceVersion"])


async def test_watch_without_bookmark_request_gets_none(server: TestAPIServer, api: Api) -> None:
    watch = await api.watch(CM, timeoutSeconds="1")
    events = await watch.rest()
    assert events == []


async def test_send_initial_events_ends_with_an_annotated_bookmark(api: Api) -> None:
    await api.create_ok(CM, configmap("a"))
    watch = await api.watch(
        CM, allowWatchBookmarks="true", sendInitialEvents="true", resourceVersionMatch="NotOlderThan"
    )
    added = await watch.next()
    bookmark = await watch.next()
    watch.close()
    assert added["type"] == "ADDED"  # type: ignore[index]
    assert bookmark["type"] == "BOOKMARK"  # type: ignore[index]
    assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}  # type: ignore[index]


async def test_watch_from_a_compacted_resource_version_gets_410_expired(server: TestAPIServer, api: Api) -> None:
    old = await api.create_ok(CM, configmap("a"))
    await api.create_ok(CM, configmap("b"))
    server.faults.compact()
    watch = await api.watch(CM, resourceVersion=old["metadata"]["resourceVersion"])
    events = await watch.rest()
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["kind"] == "Status" and status["code"] == 410 and status["reason"] == "Expired"


async def test_bounded_history_expires_old_resource_versions() -> None:
    async with TestAPIServer(history_limit=3) as server:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session:
            api = Api(session)
            old = await api.create_ok(CM, configmap("first"))
            for index in range(4):
                await api.create_ok(CM, configmap(f"more-{index}"))
            stale = await (await api.watch(CM, resourceVersion=old["metadata"]["resourceVersion"])).rest()
            assert stale[0]["object"]["code"] == 410
            status, listed = await api.get(CM)
            fresh = await api.watch(CM, resourceVersion=listed["metadata"]["resourceVersion"])
            await api.create_ok(CM, configmap("newest"))
            assert (await fresh.next())["object"]["metadata"]["name"] == "newest"  # type: ignore[index]
            fresh.close()


async def test_continue_token_after_compaction_gets_410(server: TestAPIServer, api: Api) -> None:
    for index in range(3):
        await api.create_ok(CM, configmap(f"cm-{index}"))
    status, first = await api.get(CM, limit="1")
    server.faults.compact()
    status, error = await api.get(CM, limit="1", **{"continue": first["metadata"]["continue"]})
    assert status == 410 and error["reason"] == "Expired"


async def test_watch_timeout_seconds_ends_the_stream(api: Api) -> None:
    watch = await api.watch(CM, timeoutSeconds="1", resourceVersion="0")
    assert await watch.rest() == []


async def test_watch_on_one_object_by_name(api: Api) -> None:
    await api.create_ok(CM, configmap("a"))
    await api.create_ok(CM, configmap("b"))
    watch = await api.watch(f"{CM}/b")
    event = await watch.next()
    watch.close()
    assert event["object"]["metadata"]["name"] == "b"  # type: ignore[index]
