"""Small wire behaviours clients depend on: /version/, kube-apiserver's booleans, body media types, create/update
preconditions (resourceVersion on create, uid on update)."""

from __future__ import annotations

import asyncio

import aiohttp

from pyop.testing import TestAPIServer
from testing_server.helpers import CM, GUARD, Api, configmap


async def test_version_answers_with_and_without_a_trailing_slash(api: Api, server: TestAPIServer) -> None:
    for path in ("/version", "/version/"):
        status, version = await api.get(path)
        assert status == 200
        assert (version["major"], version["minor"]) == tuple(server.kubernetes_version.split("."))
        # Every version.Info field: the official client's VersionInfo model refuses an answer without them.
        assert {"gitVersion", "gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"} <= set(
            version
        )


async def _first_line(api: Api, watch: str) -> tuple[int, bytes]:
    """The status and the first line of GET configmaps?watch=<watch> (a watch streams events, a list is one body)."""
    timeout = aiohttp.ClientTimeout(total=GUARD)
    async with api.session.get(f"{CM}?watch={watch}&timeoutSeconds=1", timeout=timeout) as response:
        return response.status, await asyncio.wait_for(response.content.readline(), GUARD)


async def test_booleans_are_true_unless_absent_zero_or_false(api: Api) -> None:
    await api.create_ok(CM, configmap("a"))
    for spelling in ("true", "True", "1", "yes", ""):
        status, line = await _first_line(api, spelling)
        assert status == 200 and line.startswith(b'{"type":"ADDED"'), spelling
    for spelling in ("false", "False", "FALSE", "0"):
        status, line = await _first_line(api, spelling)
        assert status == 200 and b'"kind":"ConfigMapList"' in line, spelling


async def test_yaml_bodies_are_accepted_for_create_and_update(api: Api) -> None:
    document = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  when: 2024-01-01\n  n: '3'\n"
    status, created = await api.call("POST", CM, document, content_type="application/yaml")
    assert status == 201, created
    assert created["data"] == {"when": "2024-01-01", "n": "3"}  # YAML timestamps stay strings, as in sigs.k8s.io/yaml
    update = document.replace("n: '3'", "n: '4'")
    status, updated = await api.call("PUT", f"{CM}/y", update, content_type="application/yaml; charset=utf-8")
    assert status == 200 and updated["data"]["n"] == "4"


async def test_other_body_media_types_are_unsupported(api: Api) -> None:
    for content_type in ("text/plain", "application/cbor"):  # protobuf: tests/protobuf
        status, error = await api.call("POST", CM, '{"metadata":{"name":"x"}}', content_type=content_type)
        assert status == 415, content_type
        assert error["reason"] == "UnsupportedMediaType"
        assert "application/json, application/yaml" in error["message"]


async def test_resource_version_on_create_is_an_internal_error(api: Api) -> None:
    body = configmap("a")
    body["metadata"]["resourceVersion"] = "12"
    status, error = await api.post(CM, body)
    assert status == 500
    assert error["message"] == "resourceVersion should not be set on objects to be created"
    assert (await api.get(f"{CM}/a"))[0] == 404


async def test_a_uid_in_an_update_body_is_a_precondition(api: Api) -> None:
    created = await api.create_ok(CM, configmap("a"))
    stale = {**created, "metadata": {**created["metadata"], "uid": "6a1c6b3e-0000-0000-0000-000000000000"}}
    status, error = await api.put(f"{CM}/a", stale)
    assert status == 409 and error["reason"] == "Conflict"
    assert error["message"] == (
        'Operation cannot be fulfilled on configmaps "a": Precondition failed: UID in precondition: '
        f"6a1c6b3e-0000-0000-0000-000000000000, UID in object meta: {created['metadata']['uid']}"
    )
    status, _ = await api.put(f"{CM}/a", {**created, "data": {"k": "new"}})
    assert status == 200
