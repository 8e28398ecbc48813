"""Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`) as kube-apiserver answers it."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest

from pyop.testing import TestAPIServer
from pyop.testing.builtins.printers import human_duration
from testing_server.helpers import CM, DEPLOY, Api, configmap, connector, deployment
from testing_server.kubectl.helpers import WIDGET_CRD, WIDGETS, Kubectl, table, widget

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
KUBECTL_ACCEPT = f"{TABLE},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


async def _table(api: Api, path: str, accept: str = KUBECTL_ACCEPT, **params: Any) -> tuple[int, Any]:
    async with api.session.get(path, headers={"Accept": accept}, params=params or None) as response:
        return response.status, await response.json()


def _columns(result: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(c["name"], c["type"], c["priority"]) for c in result["columnDefinitions"]]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-2, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (150, "2m30s"),
        (600, "10m"),
        (3 * 3600 - 1, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 60, "3h1m"),
        (8 * 3600, "8h"),
        (47 * 3600 + 59 * 60, "47h"),
        (48 * 3600, "2d"),
        (49 * 3600, "2d1h"),
        (8 * 86400, "8d"),
        (2 * 365 * 86400, "2y"),
        (2 * 365 * 86400 + 86400, "2y1d"),
        (8 * 365 * 86400, "8y"),
    ],
)
def test_ages_read_as_apimachinery_human_duration_writes_them(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


async def test_crd_printer_columns_are_typed_cells(api: Api, server: TestAPIServer) -> None:
    server.add_crd(WIDGET_CRD)
    body = widget("w1", replicas=3, ratio=0.5, paused=True, owner="team-a")
    created = await api.create_ok(WIDGETS, body)
    conditions = [{"type": "Other", "status": "x"}, {"type": "Ready", "status": "True"}]
    status, _ = await api.put(f"{WIDGETS}/w1/status", {**created, "status": {"conditions": conditions}})
    assert status == 200
    await api.create_ok(WIDGETS, widget("w2"))
    status, result = await _table(api, WIDGETS)
    assert status == 200 and result["kind"] == "Table" and result["apiVersion"] == "meta.k8s.io/v1"
    assert _columns(result) == [
        ("Name", "string", 0),
        ("Replicas", "integer", 0),
        ("Ratio", "number", 0),
        ("Paused", "boolean", 0),
        ("Ready", "string", 0),
        ("Owner", "string", 1),
        ("Age", "date", 0),
    ]
    assert result["columnDefinitions"][0]["format"] == "name"
    first, second = result["rows"]
    assert first["cells"][:6] == ["w1", 3, 0.5, True, "True", "team-a"]
    assert first["cells"][6].endswith("s")  # an age: the server formats dates (ConvertToHumanReadableDateType)
    assert second["cells"][:6] == ["w2", None, None, None, None, None]  # nothing found: an empty cell
    assert first["object"]["kind"] == "PartialObjectMetadata" and first["object"]["metadata"]["name"] == "w1"
    assert result["metadata"]["resourceVersion"]


async def test_a_crd_without_printer_columns_gets_name_and_age(api: Api, server: TestAPIServer) -> None:
    crd = {**WIDGET_CRD, "spec": {**WIDGET_CRD["spec"], "versions": [dict(WIDGET_CRD["spec"]["versions"][0])]}}
    del crd["spec"]["versions"][0]["additionalPrinterColumns"]
    server.add_crd(crd)
    await api.create_ok(WIDGETS, widget("w1"))
    status, result = await _table(api, f"{WIDGETS}/w1")
    assert status == 200
    assert _columns(result) == [("Name", "string", 0), ("Age", "date", 0)]
    assert [row["cells"][0] for row in result["rows"]] == ["w1"]


async def test_include_object_modes(api: Api) -> None:
    await api.create_ok(CM, configmap("a", data={"x": "1", "y": "2"}))
    _, metadata = await _table(api, f"{CM}/a")
    assert set(metadata["rows"][0]["object"]) == {"kind", "apiVersion", "metadata"}
    _, whole = await _table(api, f"{CM}/a", includeObject="Object")
    assert whole["rows"][0]["object"]["data"] == {"x": "1", "y": "2"}
    _, none = await _table(api, f"{CM}/a", includeObject="None")
    assert "object" not in none["rows"][0]
    status, refused = await _table(api, f"{CM}/a", includeObject="All")
    assert status == 400 and 'includeObject: Unsupported value: "All"' in refused["message"]


async def test_a_paged_list_keeps_its_continue_token(api: Api) -> None:
    for name in ("a", "b", "c"):
        await api.create_ok(CM, configmap(name))
    _, page = await _table(api, CM, limit="2")
    assert [row["cells"][0] for row in page["rows"]] == ["a", "b"]
    assert page["metadata"]["continue"] and page["metadata"]["remainingItemCount"] == 1
    _, rest = await _table(api, CM, limit="2", **{"continue": page["metadata"]["continue"]})
    assert [row["cells"][0] for row in rest["rows"]] == ["c"]


async def test_plain_json_is_still_the_default_and_the_fallback(api: Api) -> None:
    await api.create_ok(CM, configmap("a"))
    _, plain = await _table(api, f"{CM}/a", accept="application/json")
    assert plain["kind"] == "ConfigMap"
    _, old = await _table(api, f"{CM}/a", accept="application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")
    assert old["kind"] == "ConfigMap"  # meta.k8s.io/v1beta1 Tables are no longer served


async def test_builtin_standard_columns(api: Api) -> None:
    await api.create_ok(DEPLOY, deployment("web", replicas=2))
    await api.create_ok(CM, configmap("settings", data={"a": "1", "b": "2"}))
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    await api.create_ok("/api/v1/namespaces/default/pods", pod)
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
    await api.create_ok("/api/v1/namespaces/default/services", service)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    }
    await api.create_ok("/apis/batch/v1/namespaces/default/jobs", job)

    _, deployments = await _table(api, DEPLOY)
    assert [c[0] for c in _columns(deployments)] == [
        "Name",
        "Ready",
        "Up-to-date",
        "Available",
        "Age",
        "Containers",
        "Images",
        "Selector",
    ]
    assert deployments["rows"][0]["cells"][:4] == ["web", "0/2", 0, 0]
    assert deployments["rows"][0]["cells"][5:] == ["main", "nginx:1", "app=web"]
    _, pods = await _table(api, "/api/v1/namespaces/default/pods")
    assert [c[0] for c in _columns(pods) if c[2] == 0] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert pods["rows"][0]["cells"][:4] == ["p", "0/1", "Pending", "0"]
    _, services = await _table(api, "/api/v1/namespaces/default/services")
    assert [c[0] for c in _columns(services) if c[2] == 0] == [
        "Name",
        "Type",
        "Cluster-IP",
        "External-IP",
        "Port(s)",
        "Age",
    ]
    assert [row["cells"][0] for row in services["rows"]] == ["kubernetes", "s"]  # kube-apiserver's own first
    cells = services["rows"][1]["cells"]
    assert cells[0:2] == ["s", "ClusterIP"] and cells[3:5] == ["<none>", "80/TCP"] and cells[6] == "<none>"
    _, configmaps = await _table(api, CM)
    assert _columns(configmaps)[:2] == [("Name", "string", 0), ("Data", "integer", 0)]
    assert configmaps["rows"][0]["cells"][:2] == ["settings", 2]
    _, namespaces = await _table(api, "/api/v1/namespaces")
    assert [row["cells"][:2] for row in namespaces["rows"]][0] == ["default", "Active"]
    _, jobs = await _table(api, "/apis/batch/v1/namespaces/default/jobs")
    assert [c[0] for c in _columns(jobs) if c[2] == 0] == ["Name", "Status", "Completions", "Duration", "Age"]
    assert jobs["rows"][0]["cells"][:4] == ["j", "Running", "0/1", ""]


async def test_ages_come_from_the_server_clock() -> None:
    start = datetime(2030, 1, 1, tzinfo=UTC)
    now = [start]
    async with TestAPIServer(clock=lambda: now[0]) as server:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session:
            api = Api(session)
            await api.create_ok(CM, configmap("a"))
            now[0] = start + timedelta(minutes=5, seconds=30)
            _, result = await _table(api, f"{CM}/a")
    assert result["rows"][0]["cells"][2] == "5m30s"


async def test_kubectl_get_prints_the_printer_columns(kubectl: Kubectl, api: Api, server: TestAPIServer) -> None:
    server.add_crd(WIDGET_CRD)
    await api.create_ok(WIDGETS, widget("w1", replicas=3, ratio=1.5, paused=False, owner="team-a"))
    rows = table((await kubectl("get", "widgets")).stdout)
    assert rows[0] == ["NAME", "REPLICAS", "RATIO", "PAUSED", "READY", "AGE"]
    assert rows[1][:4] == ["w1", "3", "1.5", "false"]
    wide = table((await kubectl("get", "widgets", "-o", "wide")).stdout)
    assert wide[0] == ["NAME", "REPLICAS", "RATIO", "PAUSED", "READY", "OWNER", "AGE"]
    assert "team-a" in wide[1]
    crds = table((await kubectl("get", "crd")).stdout)
    assert crds[0] == ["NAME", "CREATED AT"] and crds[1][0] == "widgets.example.pyop.dev"


async def test_a_watch_that_asks_for_tables_streams_one_row_tables(api: Api) -> None:
    """`kubectl get -w`: every event's object is a Table with its row (the columns again, as kube-apiserver does)."""
    headers = {"Accept": KUBECTL_ACCEPT}
    params = {"watch": "true", "timeoutSeconds": "5"}
    async with api.session.get(CM, headers=headers, params=params) as response:
        assert response.status == 200
        await api.create_ok(CM, configmap("watched", data={"a": "1", "b": "2"}))
        line = await asyncio.wait_for(response.content.readline(), 10)
    event = json.loads(line)
    assert event["type"] == "ADDED" and event["object"]["kind"] == "Table"
    assert _columns(event["object"])[:2] == [("Name", "string", 0), ("Data", "integer", 0)]
    assert event["object"]["rows"][0]["cells"][:2] == ["watched", 2]
    assert event["object"]["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    plain = await api.watch(CM, timeoutSeconds="5")
    await api.create_ok(CM, configmap("plain"))
    assert (await plain.next_of("ADDED"))["object"]["kind"] == "ConfigMap"
    plain.close()


async def test_events_leases_and_rbac_columns(api: Api) -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web.1"},
        "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "default"},
        "reason": "ScalingReplicaSet",
        "message": "Scaled up replica set web-1 to 2 ",
        "type": "Normal",
        "source": {"component": "deployment-controller"},
        "count": 3,
    }
    await api.create_ok("/api/v1/namespaces/default/events", event)
    _, events = await _table(api, "/api/v1/namespaces/default/events")
    assert [c[0] for c in _columns(events) if c[2] == 0] == ["Last Seen", "Type", "Reason", "Object", "Message"]
    cells = events["rows"][0]["cells"]
    assert cells[1:] == [
        "Normal",
        "ScalingReplicaSet",
        "deployment/web",
        "",
        "deployment-controller",
        "Scaled up replica set web-1 to 2",
        "<unknown>",  # no first timestamp
        3,
        "web.1",
    ]
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "leader"}}
    lease["spec"] = {"holderIdentity": "pod-1_x"}
    await api.create_ok("/apis/coordination.k8s.io/v1/namespaces/default/leases", lease)
    _, leases = await _table(api, "/apis/coordination.k8s.io/v1/namespaces/default/leases")
    assert leases["rows"][0]["cells"][:2] == ["leader", "pod-1_x"]
    rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/default"
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "rb"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [
            {"kind": "ServiceAccount", "name": "op", "namespace": "default"},
            {"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"},
        ],
    }
    await api.create_ok(f"{rbac}/rolebindings", binding)
    _, bindings = await _table(api, f"{rbac}/rolebindings")
    cells = bindings["rows"][0]["cells"]
    assert cells[:2] == ["rb", "ClusterRole/view"] and cells[3:] == ["", "devs", "default/op"]
    _, roles = await _table(api, "/apis/rbac.authorization.k8s.io/v1/clusterroles")
    assert _columns(roles) == [("Name", "string", 0), ("Created At", "date", 0)]
    assert roles["rows"][0]["cells"][1].endswith("Z")  # RFC 3339, as kube-apiserver prints a Role
