"""The informer converges to the server's state under each injected fault, with a valid handler history."""

from __future__ import annotations

import asyncio

from informer_helpers import WIDGETS, Recorder, body, converged, eventually, make_informer

from pyop.client import DynamicClient
from pyop.informers import DeletedFinalStateUnknown
from pyop.testing import TestAPIServer


async def test_initial_sync_in_pages_then_live_events(dynamic: DynamicClient, server: TestAPIServer) -> None:
    for i in range(23):
        await dynamic.create(WIDGETS, body(f"w{i:02}", size=i))
    recorder = Recorder()
    informer = make_informer(dynamic, page_size=5)
    informer.add_event_handler(recorder)
    server.reset_requests()
    async with informer:
        assert await informer.wait_for_sync(10)
        assert informer.has_synced and len(informer.store) == 23
        assert recorder.events == [("add", f"default/w{i:02}") for i in range(23)]
        lists = [r for r in server.requests if r.verb == "list" or "limit=5" in r.query]
        assert len(lists) == 5  # 23 objects in pages of 5

        created = await dynamic.create(WIDGETS, body("new"))
        await dynamic.patch(WIDGETS, "w00", {"spec": {"size": 100}}, "default")
        await dynamic.delete(WIDGETS, "w01", "default")
        await converged(informer, recorder, dynamic)
        assert recorder.events[23:] == [("add", "default/new"), ("update", "default/w00"), ("delete", "default/w01")]
        assert informer.store.get("new", "default")["metadata"]["uid"] == created["metadata"]["uid"]
        assert informer.store.get("w00", "default")["spec"]["size"] == 100
        assert informer.reflectors[0].stats.lists == 1


async def test_dropped_watches_resume_without_relist(dynamic: DynamicClient, server: TestAPIServer) -> None:
    recorder = Recorder()
    informer = make_informer(dynamic)
    informer.add_event_handler(recorder)
    async with informer:
        await informer.wait_for_sync(10)
        for round_ in range(5):
            await dynamic.create(WIDGETS, body(f"w{round_}"))
            server.faults.close_watches("widgets")
            await dynamic.patch(WIDGETS, f"w{round_}", {"spec": {"round": round_}}, "default")
            if round_ % 2:
                await dynamic.delete(WIDGETS, f"w{round_ - 1}", "default")
        await converged(informer, recorder, dynamic)
        stats = informer.reflectors[0].stats
        assert stats.lists == 1, "a closed watch resumes from its resourceVersion; it must not relist"
        assert stats.watches >= 6
        assert recorder.tombstones == []  # every delete arrived as a watch event


async def test_410_relist_reports_changes_and_deletes_missed_in_the_gap(
    dynamic: DynamicClient, server: TestAPIServer
) -> None:
    for name in ("keep", "change", "remove"):
        await dynamic.create(WIDGETS, body(name))
    recorder = Recorder()
    informer = make_informer(dynamic)
    informer.add_event_handler(recorder)
    async with informer:
        await informer.wait_for_sync(10)
        # Cut the watch and keep it down (every watch request fails) while the world changes.
        server.faults.respond(500, method="GET", path_regex="watch=true", times=None)
        server.faults.close_watches("widgets")
        reflector = informer.reflectors[0]
        await eventually(lambda: reflector.stats.failures >= 1)
        await dynamic.create(WIDGETS, body("added"))
        await dynamic.patch(WIDGETS, "change", {"spec": {"v": 2}}, "default")
        await dynamic.delete(WIDGETS, "remove", "default")
        server.faults.compact()  # the history of the gap is gone: resuming gives 410
        server.faults.clear()

        await converged(informer, recorder, dynamic)
        assert reflector.stats.relists_after_gone >= 1 and reflector.stats.lists >= 2
        assert sorted(recorder.events[3:]) == [
            ("add", "default/added"),
            ("delete", "default/remove"),
            ("update", "default/change"),
        ]
        (tombstone,) = recorder.tombstones
        assert tombstone.key == "default/remove" and tombstone.obj["metadata"]["name"] == "remove"
        assert isinstance(tombstone, DeletedFinalStateUnknown)


async def test_stalled_watch_is_detected_and_reopened(dynamic: DynamicClient, server: TestAPIServer) -> None:
    recorder = Recorder()
    informer = make_informer(dynamic, stall_timeout=0.5)
    informer.add_event_handler(recorder)
    async with informer:
        await informer.wait_for_sync(10)
        reflector = informer.reflectors[0]
        await eventually(lambda: reflector.stats.bookmarks >= 2)  # bookmarks keep a quiet watch alive
        assert reflector.stats.stalls == 0
        server.faults.stall_watches("widgets")
        await dynamic.create(WIDGETS, body("during-stall"))
        await converged(informer, recorder, dynamic)
        assert reflector.stats.stalls >= 1
        assert reflector.stats.lists == 1  # reopened from the last resourceVersion, no relist needed
        assert recorder.events == [("add", "default/during-stall")]


async def test_server_errors_on_list_and_watch_are_retried(dynamic: DynamicClient, server: TestAPIServer) -> None:
    await dynamic.create(WIDGETS, body("a"))
    server.faults.respond(500, method="GET", path_regex=r"widgets\?(?!.*watch=true)", times=3)
    server.faults.respond(503, method="GET", path_regex="watch=true", times=2)
    recorder = Recorder()
    informer = make_informer(dynamic)
    informer.add_event_handler(recorder)
    async with informer:
        assert await informer.wait_for_sync(10)
        await dynamic.create(WIDGETS, body("b"))
        await converged(informer, recorder, dynamic)
        assert informer.reflectors[0].stats.failures == 5
        assert recorder.events == [("add", "default/a"), ("add", "default/b")]


async def test_all_faults_interleaved_converge(dynamic: DynamicClient, server: TestAPIServer) -> None:
    """Writes keep coming while watches drop, stall, expire and error; the end state must still match."""
    recorder = Recorder()
    informer = make_informer(dynamic, stall_timeout=0.5, page_size=3)
    informer.add_event_handler(recorder)
    faults = [
        lambda: server.faults.close_watches("widgets"),
        lambda: server.faults.stall_watches("widgets"),
        lambda: (server.faults.close_watches("widgets"), server.faults.compact()),
        lambda: server.faults.respond(500, method="GET", times=2),
    ]
    async with informer:
        await informer.wait_for_sync(10)
        existing: set[str] = set()
        for step in range(40):
            name = f"w{step % 9}"
            if name not in existing:
                await dynamic.create(WIDGETS, body(name, step=step))
                existing.add(name)
            elif step % 3:
                await dynamic.patch(WIDGETS, name, {"spec": {"step": step}}, "default")
            else:
                await dynamic.delete(WIDGETS, name, "default")
                existing.discard(name)
            if step % 5 == 0:
                faults[(step // 5) % len(faults)]()
            await asyncio.sleep(0.01)
        server.faults.clear()
        bookmarks = informer.reflectors[0].stats.bookmarks
        await eventually(lambda: informer.reflectors[0].stats.bookmarks > bookmarks)  # a watch is open now
        # Finally a stall: the last write can only arrive through a reopened watch.
        server.faults.stall_watches("widgets")
        await dynamic.create(WIDGETS, body("last"))
        await converged(informer, recorder, dynamic)
        stats = informer.reflectors[0].stats
        assert stats.stalls >= 1 and stats.relists_after_gone >= 1 and stats.failures >= 1


async def test_continue_token_expiring_mid_list_falls_back_to_a_full_list(
    dynamic: DynamicClient, server: TestAPIServer
) -> None:
    for i in range(5):
        await dynamic.create(WIDGETS, body(f"w{i}"))
    server.faults.respond(410, method="GET", path_regex="continue=", times=1)
    server.reset_requests()
    recorder = Recorder()
    informer = make_informer(dynamic, page_size=2)
    informer.add_event_handler(recorder)
    async with informer:
        assert await informer.wait_for_sync(10)
        await converged(informer, recorder, dynamic)
    lists = [r.query for r in server.requests if r.resource == "widgets" and "watch=true" not in r.query]
    assert lists[0].startswith("limit=2") and "continue=" in lists[1]
    assert "limit" not in lists[2]  # the fallback: one unpaginated list
    assert informer.reflectors[0].stats.lists == 1 and informer.reflectors[0].stats.failures == 0
