"""A default added to a CRD later shows on the objects stored before it (issue 12 item 9): kube-apiserver defaults
custom resources when it reads them from etcd, with the schema of their stored version, without a new
resourceVersion or a watch event."""

from __future__ import annotations

import copy
from typing import Any

from testing_server.helpers import Api
from testing_server.test_crds import CRD_PATH, WIDGETS, _install, widget, widget_crd

CRD = f"{CRD_PATH}/widgets.example.com"


async def _add_default(api: Api, name: str, schema: dict[str, Any]) -> None:
    status, crd = await api.get(CRD)
    assert status == 200
    crd = copy.deepcopy(crd)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][name] = schema
    status, answer = await api.put(CRD, crd)
    assert status == 200, answer


async def test_an_existing_object_reads_back_with_a_default_added_later(api: Api) -> None:
    await _install(api)
    created = await api.create_ok(WIDGETS, widget("old"))
    assert "tier" not in created["spec"]
    await _add_default(api, "tier", {"type": "string", "default": "gold"})

    status, read = await api.get(f"{WIDGETS}/old")
    assert status == 200
    assert read["spec"]["tier"] == "gold"
    assert read["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    status, listed = await api.get(WIDGETS)
    assert [item["spec"].get("tier") for item in listed["items"]] == ["gold"]
    # Written values win over the new default; objects created afterwards get it on the way in as before.
    explicit = await api.create_ok(WIDGETS, widget("explicit", tier="silver"))
    assert explicit["spec"]["tier"] == "silver"


async def test_the_read_default_sends_no_watch_event(api: Api) -> None:
    await _install(api)
    created = await api.create_ok(WIDGETS, widget("quiet"))
    watch = await api.watch(WIDGETS, resourceVersion=created["metadata"]["resourceVersion"])
    try:
        await _add_default(api, "tier", {"type": "string", "default": "gold"})
        await api.create_ok(WIDGETS, widget("after"))  # the next event on the stream
        event = await watch.next_of("ADDED", "MODIFIED", "DELETED")
        assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "after")
    finally:
        watch.close()


async def test_a_crd_update_without_schema_change_leaves_objects_alone(api: Api) -> None:
    crd = widget_crd()
    await _install(api, crd)
    await api.create_ok(WIDGETS, widget("same"))
    status, before = await api.get(f"{WIDGETS}/same")
    status, current = await api.get(CRD)
    current["metadata"].setdefault("labels", {})["touched"] = "yes"
    status, _ = await api.put(CRD, current)
    assert status == 200
    status, after = await api.get(f"{WIDGETS}/same")
    assert after == before
