"""Lists at a resourceVersion: which state each `resourceVersion`/`resourceVersionMatch` combination is served
from, as kube-apiserver's API concepts page tabulates it, with the errors its option validation answers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyop.api.status import ApiError
from pyop.apiserver.registry.list_options import ListRead, list_read
from pyop.testing import TestAPIServer
from testing_server.helpers import CM, Api, configmap, official_client

MERGE = "application/merge-patch+json"


def names(listed: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in listed["items"]]


async def test_resource_version_0_is_served_whole_ignoring_limit(api: Api) -> None:
    """The watch cache ignores `limit` for `resourceVersion=0`: client-go's reflector lists so."""
    for index in range(5):
        await api.create_ok(CM, configmap(f"cm-{index}"))
    status, listed = await api.get(CM, limit="2", resourceVersion="0")
    assert status == 200
    assert names(listed) == [f"cm-{index}" for index in range(5)]
    assert "continue" not in listed["metadata"] and "remainingItemCount" not in listed["metadata"]
    status, not_older = await api.get(CM, limit="2", resourceVersion="0", resourceVersionMatch="NotOlderThan")
    assert status == 200 and len(not_older["items"]) == 5


async def test_a_consistent_list_is_still_paged(api: Api) -> None:
    for index in range(3):
        await api.create_ok(CM, configmap(f"cm-{index}"))
    status, first = await api.get(CM, limit="2")
    assert status == 200 and names(first) == ["cm-0", "cm-1"] and first["metadata"]["continue"]


async def test_exact_match_lists_the_state_at_that_version(api: Api) -> None:
    first = await api.create_ok(CM, configmap("first", data={"k": "old"}))
    version = first["metadata"]["resourceVersion"]
    await api.create_ok(CM, configmap("second"))
    await api.patch(f"{CM}/first", {"data": {"k": "new"}}, MERGE)
    status, listed = await api.get(CM, resourceVersion=version, resourceVersionMatch="Exact")
    assert status == 200
    assert listed["metadata"]["resourceVersion"] == version
    assert names(listed) == ["first"] and listed["items"][0]["data"] == {"k": "old"}
    assert listed["items"][0]["metadata"]["resourceVersion"] == version


async def test_exact_match_brings_back_deleted_objects(api: Api) -> None:
    await api.create_ok(CM, configmap("gone"))
    status, before = await api.get(CM)
    await api.delete(f"{CM}/gone")
    await api.create_ok(CM, configmap("later"))
    version = before["metadata"]["resourceVersion"]
    status, listed = await api.get(CM, resourceVersion=version, resourceVersionMatch="Exact")
    assert status == 200 and names(listed) == ["gone"]


async def test_a_version_with_a_limit_and_no_match_is_the_legacy_exact_match(api: Api) -> None:
    for index in range(3):
        await api.create_ok(CM, configmap(f"cm-{index}"))
    status, before = await api.get(CM)
    version = before["metadata"]["resourceVersion"]
    await api.create_ok(CM, configmap("cm-00-late"))
    status, page = await api.get(CM, resourceVersion=version, limit="2")
    assert status == 200 and names(page) == ["cm-0", "cm-1"] and page["metadata"]["resourceVersion"] == version
    status, rest = await api.get(CM, limit="2", **{"continue": page["metadata"]["continue"]})
    assert status == 200 and names(rest) == ["cm-2"]
    status, unlimited = await api.get(CM, resourceVersion=version)  # no limit: not older than, the newest state
    assert status == 200 and "cm-00-late" in names(unlimited)


async def test_a_version_newer_than_the_newest_is_too_large(api: Api) -> None:
    created = await api.create_ok(CM, configmap("only"))
    future = str(int(created["metadata"]["resourceVersion"]) + 100)
    status, error = await api.get(CM, resourceVersion=future, resourceVersionMatch="NotOlderThan")
    assert status == 504 and error["reason"] == "Timeout"
    assert error["message"].startswith(f"Timeout: Too large resource version: {future}, current: ")
    assert error["details"]["causes"] == [
        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]
    assert error["details"]["retryAfterSeconds"] == 1


async def test_an_exact_version_compacted_away_is_expired(server: TestAPIServer, api: Api) -> None:
    old = await api.create_ok(CM, configmap("a"))
    await api.create_ok(CM, configmap("b"))
    server.faults.compact()
    status, error = await api.get(CM, resourceVersion=old["metadata"]["resourceVersion"], resourceVersionMatch="Exact")
    assert status == 410 and error["reason"] == "Expired"
    assert error["message"] == "The resourceVersion for the provided list is too old."


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"resourceVersionMatch": "NotOlderThan"},
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            {"resourceVersion": "0", "resourceVersionMatch": "Exact"},
            'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
        (
            {"resourceVersion": "1", "resourceVersionMatch": "Newest"},
            'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
        ),
    ],
)
async def test_invalid_list_options_are_422(api: Api, params: dict[str, str], message: str) -> None:
    status, error = await api.get(CM, **params)
    assert status == 422 and error["reason"] == "Invalid"
    assert error["message"] == f'ListOptions.meta.k8s.io "" is invalid: {message}'
    assert error["details"]["kind"] == "ListOptions" and error["details"]["group"] == "meta.k8s.io"


async def test_a_continue_token_with_a_resource_version_is_a_bad_request(api: Api) -> None:
    for index in range(2):
        await api.create_ok(CM, configmap(f"cm-{index}"))
    status, first = await api.get(CM, limit="1")
    token = first["metadata"]["continue"]
    status, error = await api.get(
        CM, limit="1", resourceVersion=first["metadata"]["resourceVersion"], **{"continue": token}
    )
    assert status == 400 and error["message"] == "specifying resource version is not allowed when using continue"
    status, page = await api.get(CM, limit="1", resourceVersion="0", **{"continue": token})
    assert status == 200 and names(page) == ["cm-1"]


async def test_a_malformed_resource_version_is_a_bad_request(api: Api) -> None:
    status, error = await api.get(CM, resourceVersion="abc")
    assert status == 400 and error["message"].startswith('resourceVersion: Invalid value: "abc"')


async def test_the_official_client_lists_whole_at_version_0(server: TestAPIServer, api: Api) -> None:
    import kubernetes

    for index in range(4):
        await api.create_ok(CM, configmap(f"cm-{index}"))

    def list_configmaps() -> tuple[int, str | None, int]:
        with official_client(server) as client:
            core = kubernetes.client.CoreV1Api(client)
            whole = core.list_namespaced_config_map("default", limit=1, resource_version="0")
            paged = core.list_namespaced_config_map("default", limit=1)
            return len(whole.items), whole.metadata._continue, len(paged.items)

    whole, token, paged = await asyncio.to_thread(list_configmaps)
    assert (whole, token, paged) == (4, None, 1)


def test_list_read_resolves_each_combination() -> None:
    assert list_read("", "", 5, "") == ListRead(5)
    assert list_read("0", "", 5, "") == ListRead(0)
    assert list_read("7", "", 5, "") == ListRead(5, exact_version=7)
    assert list_read("7", "", 0, "") == ListRead(0, minimum_version=7)
    assert list_read("7", "NotOlderThan", 5, "") == ListRead(5, minimum_version=7)
    assert list_read("7", "Exact", 0, "") == ListRead(0, exact_version=7)
    with pytest.raises(ApiError) as raised:
        list_read("7", "", 5, "token")
    assert raised.value.code == 400
