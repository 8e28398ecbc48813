"""The test server with protobuf clients: bodies of built-in kinds decode, protobuf-only clients get protobuf."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import aiohttp
from testing_server.helpers import CM, GUARD, Api, configmap

from protobuf.samples import CRD_SAMPLE, SAMPLES_1_35, assert_contains
from pyop.apiserver.endpoints.protobuf import decode_object, decode_watch_event, encode_object
from pyop.apiserver.endpoints.protobuf.envelope import unwrap, wrap
from pyop.apiserver.endpoints.protobuf.negotiation import wants_protobuf
from pyop.apiserver.endpoints.protobuf.wire import iter_fields, length_delimited
from pyop.testing import TestAPIServer, schemaless_crd

PROTOBUF = "application/vnd.kubernetes.protobuf"
CLIENT_GO = f"{PROTOBUF}, application/json"  # what client-go sends when configured for protobuf
WIDGETS = "/apis/example.pyop.dev/v1/namespaces/default/widgets"


async def _send(
    api: Api, method: str, path: str, body: bytes | None, accept: str = CLIENT_GO, content_type: str = PROTOBUF
) -> tuple[int, str, bytes]:
    headers = {"Accept": accept, "Content-Type": content_type}
    async with api.session.request(method, path, data=body, headers=headers) as response:
        return response.status, response.content_type, await response.read()


async def test_a_protobuf_create_is_stored_as_its_json_twin(api: Api) -> None:
    status, content_type, body = await _send(api, "POST", CM, encode_object(configmap("p", data={"k": "v"})))
    assert (status, content_type) == (201, "application/json"), body  # JSON allowed: JSON it is
    status, json_twin = await api.post(CM, configmap("j", data={"k": "v"}))
    assert status == 201
    _status, stored = await api.get(f"{CM}/p")
    assert stored["data"] == {"k": "v"}
    for key in ("name", "uid", "resourceVersion", "creationTimestamp", "managedFields"):
        stored["metadata"].pop(key)
        json_twin["metadata"].pop(key)
    assert stored == json_twin


async def test_updates_and_deletes_take_protobuf_bodies(api: Api) -> None:
    created = await api.create_ok(CM, configmap("u"))
    created["data"] = {"k": "changed"}
    status, _type, _body = await _send(api, "PUT", f"{CM}/u", encode_object(created))
    assert status == 200
    options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": "not-the-uid"}}
    status, _type, body = await _send(api, "DELETE", f"{CM}/u", encode_object(options))
    assert status == 409, body  # the precondition in the protobuf body was read
    options["preconditions"] = {"uid": created["metadata"]["uid"]}
    status, _type, _body = await _send(api, "DELETE", f"{CM}/u", encode_object(options))
    assert status == 200


async def test_protobuf_only_clients_get_protobuf(api: Api) -> None:
    status, content_type, body = await _send(api, "POST", CM, encode_object(configmap("o")), accept=PROTOBUF)
    assert (status, content_type) == (201, PROTOBUF)
    created = decode_object(body)
    assert created["metadata"]["uid"] and created["data"] == {"k": "v"}
    status, content_type, body = await _send(api, "GET", CM, None, accept=PROTOBUF)
    assert (status, content_type) == (200, PROTOBUF)
    listed = decode_object(body)
    assert listed["kind"] == "ConfigMapList" and [item["metadata"]["name"] for item in listed["items"]] == ["o"]
    status, content_type, body = await _send(api, "GET", f"{CM}/missing", None, accept=PROTOBUF)
    assert (status, content_type) == (404, PROTOBUF)
    error = decode_object(body)
    assert (error["kind"], error["reason"], error["code"]) == ("Status", "NotFound", 404)


async def test_protobuf_bodies_of_custom_resources_are_415(api: Api, server: TestAPIServer) -> None:
    server.add_crd(schemaless_crd("example.pyop.dev", "Widget", "widgets"))
    widget = {"apiVersion": "example.pyop.dev/v1", "kind": "Widget", "metadata": {"name": "w"}}
    status, _type, body = await _send(api, "POST", WIDGETS, b"k8s\x00anything")
    assert status == 415, body
    assert b"accepted media types include: application/json, application/yaml" in body
    assert b"protobuf" not in body.split(b"include:")[1]
    await api.create_ok(WIDGETS, widget)
    status, content_type, body = await _send(api, "GET", f"{WIDGETS}/w", None, accept=PROTOBUF)
    assert (status, content_type) == (406, PROTOBUF)  # a custom resource has no protobuf encoding
    assert decode_object(body)["reason"] == "NotAcceptable"


async def test_bodies_that_are_not_protobuf_are_400(api: Api) -> None:
    status, _type, body = await _send(api, "POST", CM, b'{"metadata":{"name":"x"}}', accept="application/json")
    assert status == 400, body
    assert b"expected prefix [107 56 115 0]" in body
    wrong_kind = encode_object({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}})
    status, _type, body = await _send(api, "POST", CM, wrong_kind, accept="application/json")
    assert status == 400, body  # a Secret is not a ConfigMap, whatever the wire


async def _frames(response: aiohttp.ClientResponse, count: int) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for _ in range(count):
        size = int.from_bytes(await asyncio.wait_for(response.content.readexactly(4), GUARD), "big")
        events.append(decode_watch_event(await asyncio.wait_for(response.content.readexactly(size), GUARD)))
    return events


async def test_watches_stream_protobuf_frames_to_protobuf_only_clients(api: Api) -> None:
    await api.create_ok(CM, configmap("before"))
    headers = {"Accept": f"{PROTOBUF};stream=watch"}
    async with api.session.get(CM, params={"watch": "1"}, headers=headers) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == f"{PROTOBUF};stream=watch"
        [(event_type, obj)] = await _frames(response, 1)
        assert (event_type, obj["metadata"]["name"]) == ("ADDED", "before")
        await api.create_ok(CM, configmap("after", data={"a": "b"}))
        [(event_type, obj)] = await _frames(response, 1)
        assert event_type == "ADDED"
        assert_contains(obj, {"kind": "ConfigMap", "metadata": {"name": "after"}, "data": {"a": "b"}})


async def test_watches_stay_json_when_json_is_allowed(api: Api) -> None:
    await api.create_ok(CM, configmap("w"))
    headers = {"Accept": f"{PROTOBUF};stream=watch, application/json"}
    async with api.session.get(CM, params={"watch": "1"}, headers=headers) as response:
        assert response.headers["Content-Type"].startswith("application/json")
        line = await asyncio.wait_for(response.content.readline(), GUARD)
        assert line.startswith(b'{"type":"ADDED"')


def test_which_accept_headers_ask_for_protobuf_only() -> None:
    assert wants_protobuf(PROTOBUF)
    assert wants_protobuf(f"{PROTOBUF};stream=watch")
    assert not wants_protobuf(CLIENT_GO)
    assert not wants_protobuf(f"{PROTOBUF}, */*")
    assert not wants_protobuf(f"{PROTOBUF};as=Table;v=v1;g=meta.k8s.io")  # a Table: served as JSON here
    assert wants_protobuf(f"{PROTOBUF}, application/json;q=0")
    assert not wants_protobuf("")


NEW_KINDS = {  # a kind new in 1.33-1.35 and an old kind with 1.34 fields, through the server in protobuf
    "ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
    "ServiceCIDR": "/apis/networking.k8s.io/v1/servicecidrs",
    "Pod": "/api/v1/namespaces/default/pods",
}


async def test_kinds_and_fields_new_up_to_1_35_are_stored_from_protobuf_and_served_as_protobuf(api: Api) -> None:
    for sample in SAMPLES_1_35:
        path = NEW_KINDS.get(sample["kind"])
        if path is None:
            continue
        body = {key: value for key, value in sample.items() if key != "status"}
        status, _type, answer = await _send(api, "POST", path, encode_object(body), accept=PROTOBUF)
        assert status == 201, answer
        created = decode_object(answer)
        assert_contains(created, body)  # encoded back by the server from what it stored
        _status, stored = await api.get(f"{path}/{sample['metadata']['name']}")
        assert_contains(stored, body)  # e.g. spec.hostnameOverride and restartPolicyRules of the Pod


MIGRATIONS = "/apis/storagemigration.k8s.io/v1/storageversionmigrations"  # storagemigration.k8s.io/v1: 1.37
NOT_MARSHALABLE = "does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message"


async def test_kinds_newer_than_the_table_are_answered_as_types_without_protobuf(api: Api) -> None:
    """kube-apiserver's errNotMarshalable for a type without protobuf: a body is a 400 (transformDecodeError), an
    answer to a protobuf-only client a 406 NotAcceptable Status (kubernetes#67047), a watch a 406."""
    migration = {
        "apiVersion": "storagemigration.k8s.io/v1",
        "kind": "StorageVersionMigration",
        "metadata": {"name": "m"},
        "spec": {"resource": {"group": "apps", "resource": "deployments"}},
    }
    body = wrap("storagemigration.k8s.io/v1", "StorageVersionMigration", b"\x0a\x03\x0a\x01m")
    status, _type, answer = await _send(api, "POST", MIGRATIONS, body, accept="application/json")
    assert status == 400, answer
    assert json.loads(answer)["message"] == (
        f'StorageVersionMigration in version "v1" cannot be handled as a StorageVersionMigration: '
        f"object *v1.StorageVersionMigration {NOT_MARSHALABLE}"
    )
    await api.create_ok(MIGRATIONS, migration)
    status, content_type, answer = await _send(api, "GET", f"{MIGRATIONS}/m", None, accept=PROTOBUF)
    assert (status, content_type) == (406, PROTOBUF)
    error = decode_object(answer)
    assert (error["reason"], error["message"]) == (
        "NotAcceptable",
        f"object *v1.StorageVersionMigration {NOT_MARSHALABLE}",
    )
    status, _type, answer = await _send(api, "GET", MIGRATIONS, None, accept=PROTOBUF)
    assert decode_object(answer)["message"] == f"object *v1.StorageVersionMigrationList {NOT_MARSHALABLE}"
    status, content_type, answer = await _send(api, "GET", f"{MIGRATIONS}/m", None)  # client-go's: JSON
    assert (status, content_type) == (200, "application/json")
    headers = {"Accept": f"{PROTOBUF};stream=watch"}
    async with api.session.get(MIGRATIONS, params={"watch": "1"}, headers=headers) as response:
        assert response.status == 406


async def test_an_object_with_a_field_newer_than_its_message_is_406_not_sent_without_it(api: Api) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "grouped", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "schedulingGroup": {"podGroupName": "g"}},  # 1.36
    }
    await api.create_ok("/api/v1/namespaces/default/pods", pod)
    status, content_type, answer = await _send(api, "GET", "/api/v1/namespaces/default/pods/grouped", None, PROTOBUF)
    assert (status, content_type) == (406, PROTOBUF)
    assert decode_object(answer)["message"].startswith("Pod.spec.schedulingGroup has no protobuf field")
    status, _type, answer = await _send(api, "GET", "/api/v1/namespaces/default/pods/grouped", None)
    assert status == 200 and json.loads(answer)["spec"]["schedulingGroup"] == {"podGroupName": "g"}
    headers = {"Accept": f"{PROTOBUF};stream=watch"}
    params = {"watch": "1", "fieldSelector": "metadata.name=grouped"}
    async with api.session.get("/api/v1/namespaces/default/pods", params=params, headers=headers) as response:
        [(event_type, error)] = await _frames(response, 1)  # an ERROR event, not the Pod without the field
        assert (event_type, error["code"], error["reason"]) == ("ERROR", 406, "NotAcceptable")
        assert error["message"].startswith("Pod.spec.schedulingGroup has no protobuf field")


async def test_a_crd_created_in_protobuf_serves_its_custom_resources(api: Api) -> None:
    """apiextensions.k8s.io/v1 has protobuf (Helm's client-go 1.35 links its types): the schema's JSON values and
    JSONSchemaPropsOr* wrappers arrive as sent, and the CRD's custom resources are validated and defaulted by it."""
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    status, _type, answer = await _send(api, "POST", crds, encode_object(CRD_SAMPLE), accept=PROTOBUF)
    assert status == 422, answer  # kube's structural-schema rules, read from the protobuf body
    assert "dependencies: Forbidden: dependencies is not supported" in decode_object(answer)["message"]
    crd = copy.deepcopy(CRD_SAMPLE)
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    del schema["x-kubernetes-preserve-unknown-fields"], schema["properties"]["spec"]["dependencies"]
    del schema["properties"]["spec"]["properties"]["pair"]
    status, _type, answer = await _send(api, "POST", crds, encode_object(crd), accept=PROTOBUF)
    assert status == 201, decode_object(answer)["message"]
    assert_contains(decode_object(answer), crd)
    widgets = "/apis/example.com/v1/namespaces/default/widgets"
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"tags": ["a"]}}
    created = await api.create_ok(widgets, widget)
    assert created["spec"]["size"] == 3  # the schema's default, a JSON value that came in protobuf
    status, invalid = await api.post(widgets, {**widget, "metadata": {"name": "x"}, "spec": {"size": 11}})
    assert status == 422, invalid  # maximum 10.5


async def test_a_body_with_field_numbers_newer_than_the_table_is_415_not_stored_without_them(api: Api) -> None:
    """Go skips unknown numbers (right for an older client); here the table is older than the server's
    Kubernetes, so a number it lacks is a newer client's field (PodSpec 45, ...): refused, naming where."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "newer"}, "spec": {"containers": [{"name": "c"}]}}
    api_version, kind, raw = unwrap(encode_object(pod))
    fields = dict((number, value) for number, _wire, value in iter_fields(raw))
    spec = fields[2] + length_delimited(60, b"x")  # PodSpec has no field 60
    body = wrap(api_version, kind, length_delimited(1, fields[1]) + length_delimited(2, spec))
    status, _type, answer = await _send(api, "POST", "/api/v1/namespaces/default/pods", body, accept="application/json")
    assert status == 415, answer
    message = json.loads(answer)["message"]
    assert "does not have: Pod.spec: field 60 of k8s.io.api.core.v1.PodSpec - send it as application/json" in message
    status, _missing = await api.get("/api/v1/namespaces/default/pods/newer")
    assert status == 404
    status, _type, answer = await _send(api, "POST", "/api/v1/namespaces/default/pods", encode_object(pod))
    assert status == 201, answer  # the same Pod without the unknown number
