"""kubectl's typed commands send protobuf: they work, and their bytes are exactly what the codec writes.

Each command runs with `-v=9`, whose log holds the request body as a hex dump: the bytes kubectl itself encoded.
Decoding them and encoding the result again gives the same bytes, and the object the server stores equals the one
it stores when the same command's JSON (`--dry-run=client -o json`) is sent instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from testing_server.helpers import Api
from testing_server.kubectl.helpers import Kubectl

from pyop.apiserver.endpoints.protobuf import decode_object, encode_object, negotiation
from pyop.apiserver.endpoints.protobuf.wire import MAGIC

COMMANDS: list[tuple[str, list[str]]] = [
    ("/api/v1/namespaces", ["namespace", "NAME"]),
    ("/api/v1/namespaces/default/configmaps", ["configmap", "NAME", "--from-literal=a=b", "--from-literal=c=d"]),
    ("/apis/apps/v1/namespaces/default/deployments", ["deployment", "NAME", "--image=nginx", "--port=80"]),
    ("/api/v1/namespaces/default/secrets", ["secret", "generic", "NAME", "--from-literal=k=v"]),
    ("/api/v1/namespaces/default/services", ["service", "clusterip", "NAME", "--tcp=80:8080"]),
    ("/apis/batch/v1/namespaces/default/cronjobs", ["cronjob", "NAME", "--image=busybox", "--schedule=*/5 * * * *"]),
    ("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", ["role", "NAME", "--verb=get", "--resource=pods"]),
    ("/apis/policy/v1/namespaces/default/poddisruptionbudgets", ["pdb", "NAME", "--selector=a=b", "--min-available=1"]),
    ("/api/v1/namespaces/default/resourcequotas", ["quota", "NAME", "--hard=cpu=1,memory=1Gi,pods=2"]),
    ("/apis/networking.k8s.io/v1/namespaces/default/ingresses", ["ingress", "NAME", "--rule=a.com/b=svc:80"]),
]
_BODY = re.compile(r'"Request Body" body=<\n(.*?)\n\s*>', re.S)
_VOLATILE = ("name", "uid", "resourceVersion", "creationTimestamp", "managedFields")


def request_body(log: str) -> bytes:
    """The first request body of a `-v=9` log (client-go prints binary bodies as `hexdump -C` lines)."""
    match = _BODY.search(log)
    assert match, f"no request body in the log:\n{log[-2000:]}"
    data = bytearray()
    for line in match.group(1).splitlines():
        data += bytes.fromhex(line.strip()[10:58].replace(" ", ""))
    return bytes(data)


def _comparable(obj: dict[str, Any], name: str) -> dict[str, Any]:
    obj = json.loads(json.dumps(obj).replace(name, "NAME"))
    for key in _VOLATILE:
        obj["metadata"].pop(key, None)
    spec = obj.get("spec") or {}
    spec.pop("clusterIP", None)  # allocated per Service
    spec.pop("clusterIPs", None)
    return obj


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[command[0] for _path, command in COMMANDS])
async def test_typed_create_sends_protobuf_that_round_trips(
    kubectl: Kubectl, api: Api, path: str, command: list[str]
) -> None:
    created = await kubectl("create", "-v=9", *[part.replace("NAME", "viaproto") for part in command])
    sent = request_body(created.stderr)
    assert sent.startswith(MAGIC)
    assert "Content-Type: application/vnd.kubernetes.protobuf" in created.stderr
    assert encode_object(decode_object(sent)) == sent  # kubectl's own bytes, reproduced exactly
    as_json = await kubectl(
        "create", "--dry-run=client", "-o", "json", *[p.replace("NAME", "viajson") for p in command]
    )
    assert decode_object(sent) == json.loads(as_json.stdout.replace("viajson", "viaproto"))  # Go's JSON of it
    await api.create_ok(path, json.loads(as_json.stdout))
    status, via_proto = await api.get(f"{path}/viaproto")
    assert status == 200, via_proto
    status, via_json = await api.get(f"{path}/viajson")
    assert _comparable(via_proto, "viaproto") == _comparable(via_json, "viajson")


async def test_auth_can_i_and_whoami_work(kubectl: Kubectl) -> None:
    """SelfSubjectAccessReview and SelfSubjectReview: protobuf bodies from kubectl."""
    assert (await kubectl("auth", "can-i", "create", "deployments")).stdout.strip() == "yes"
    whoami = await kubectl("auth", "whoami", "-o", "json")
    assert json.loads(whoami.stdout)["status"]["userInfo"]["username"]


async def test_kubectl_reads_protobuf_answers(kubectl: Kubectl, api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """kube-apiserver answers client-go's `protobuf, json` with protobuf; this server picks JSON, so to check the
    encoder against a real Go decoder the test makes it prefer protobuf: kubectl prints what it decoded."""
    monkeypatch.setattr(negotiation, "wants_protobuf", lambda accept: negotiation.PROTOBUF_TYPE in accept)
    for path, args in (
        ("/api/v1/namespaces/default/configmaps/c", ("configmap", "c", "--from-literal=a=b")),
        ("/api/v1/namespaces/default/secrets/s", ("secret", "generic", "s", "--from-literal=k=v")),
    ):
        created = await kubectl("create", *args, "-o", "json", "--show-managed-fields", "-v=8")
        answer = created.stderr.split("Response Headers:", 1)[1]
        assert "Content-Type: application/vnd.kubernetes.protobuf" in answer.split("Response Body", 1)[0]
        status, stored = await api.get(path)
        assert status == 200
        assert json.loads(created.stdout) == stored  # uid, times, managedFields (FieldsV1): through Go's decoder
    failed = await kubectl("create", "configmap", "c", check=False)  # AlreadyExists: a protobuf Status
    assert failed.stderr.strip() == 'error: failed to create configmap: configmaps "c" already exists'
