"""The initial list asks for the next page before preparing the one it has, so the server builds the next page
while the informer prepares this one; the snapshot is the same."""

from __future__ import annotations

from typing import Any

from informer_helpers import WIDGETS, Recorder, body, make_informer

from pyop.client import DynamicClient
from pyop.testing import TestAPIServer


async def test_the_next_page_is_asked_for_before_this_one_is_prepared(
    dynamic: DynamicClient, server: TestAPIServer
) -> None:
    for i in range(7):
        await dynamic.create(WIDGETS, body(f"w{i}"))
    steps: list[str] = []
    real_list = dynamic.list

    async def recording_list(*args: Any, **kwargs: Any) -> Any:
        steps.append("next page" if kwargs.get("continue_token") else "first page")
        return await real_list(*args, **kwargs)

    dynamic.list = recording_list  # type: ignore[method-assign]

    def recording_transform(obj: dict[str, Any]) -> dict[str, Any]:
        steps.append(obj["metadata"]["name"])
        return obj

    recorder = Recorder()
    informer = make_informer(dynamic, page_size=3, transform=recording_transform)
    informer.add_event_handler(recorder)
    async with informer:
        assert await informer.wait_for_sync(10)
    assert steps == [
        "first page",
        "next page",
        "w0", "w1", "w2",
        "next page",
        "w3", "w4", "w5",
        "w6",
    ]  # fmt: skip
    assert recorder.events == [("add", f"default/w{i}") for i in range(7)]
    assert len(informer.store) == 7 and all(informer.store.get(f"w{i}", "default") for i in range(7))
