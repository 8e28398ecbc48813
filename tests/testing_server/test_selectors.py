"""Label selector operators and field selectors, on list and watch."""

from __future__ import annotations

import pytest

from testing_server.helpers import CM, Api, configmap

OBJECTS = {
    "prod-web": {"env": "prod", "tier": "web"},
    "prod-db": {"env": "prod", "tier": "db"},
    "dev-web": {"env": "dev", "tier": "web"},
    "unlabelled": {},
}


@pytest.fixture
async def labelled(api: Api) -> Api:
    for name, labels in OBJECTS.items():
        await api.create_ok(CM, configmap(name, labels=labels))
    return api


async def _names(api: Api, path: str = CM, **params: str) -> set[str]:
    status, listed = await api.get(path, **params)
    assert status == 200, listed
    return {item["metadata"]["name"] for item in listed["items"]}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("env=prod", {"prod-web", "prod-db"}),
        ("env==prod", {"prod-web", "prod-db"}),
        ("env!=prod", {"dev-web", "unlabelled"}),
        ("tier in (db, web)", {"prod-web", "prod-db", "dev-web"}),
        ("env notin (prod)", {"dev-web", "unlabelled"}),
        ("tier", {"prod-web", "prod-db", "dev-web"}),
        ("!tier", {"unlabelled"}),
        ("env=prod,tier=web", {"prod-web"}),
    ],
)
async def test_label_selector_operator(labelled: Api, selector: str, expected: set[str]) -> None:
    assert await _names(labelled, labelSelector=selector) == expected


async def test_malformed_label_selector_is_a_bad_request(api: Api) -> None:
    status, error = await api.get(CM, labelSelector="env in prod")
    assert status == 400 and error["reason"] == "BadRequest"


async def test_field_selector_on_name_and_namespace(labelled: Api) -> None:
    assert await _names(labelled, fieldSelector="metadata.name=prod-db") == {"prod-db"}
    assert await _names(labelled, fieldSelector="metadata.name!=prod-db") == {"prod-web", "dev-web", "unlabelled"}
    everywhere = "/api/v1/configmaps"
    assert await _names(labelled, everywhere, fieldSelector="metadata.namespace=default") == set(OBJECTS)
    # kube-apiserver publishes the aggregation layer's ConfigMap there (pyop.testing.aggregator)
    in_kube_system = {"extension-apiserver-authentication"}
    assert await _names(labelled, everywhere, fieldSelector="metadata.namespace=kube-system") == in_kube_system


async def test_unsupported_field_selector_is_a_bad_request(api: Api) -> None:
    status, error = await api.get(CM, fieldSelector="data.k=v")
    assert status == 400
    assert error["message"] == "field label not supported: data.k"


async def test_built_in_field_labels(api: Api) -> None:
    pods = "/api/v1/namespaces/default/pods"
    await api.create_ok(pods, {"metadata": {"name": "p"}, "spec": {"nodeName": "node-1", "containers": []}})
    await api.create_ok(pods, {"metadata": {"name": "q"}, "spec": {"nodeName": "node-2", "containers": []}})
    assert await _names(api, pods, fieldSelector="spec.nodeName=node-2") == {"q"}
    assert await _names(api, pods, fieldSelector="status.phase=Pending") == {"p", "q"}


async def test_watch_with_label_selector_turns_leaving_into_deleted(labelled: Api) -> None:
    status, listed = await labelled.get(CM, labelSelector="env=prod")
    watch = await labelled.watch(CM, labelSelector="env=prod", resourceVersion=listed["metadata"]["resourceVersion"])
    merge = "application/merge-patch+json"
    await labelled.patch(f"{CM}/dev-web", {"metadata": {"labels": {"env": "prod"}}}, merge)
    await labelled.patch(f"{CM}/prod-db", {"metadata": {"labels": {"env": "dev"}}}, merge)
    await labelled.patch(f"{CM}/unlabelled", {"data": {"other": "x"}}, merge)
    await labelled.patch(f"{CM}/prod-web", {"data": {"k": "changed"}}, merge)
    events = [await watch.next_of("ADDED", "MODIFIED", "DELETED") for _ in range(3)]
    watch.close()
    assert [(event["type"], event["object"]["metadata"]["name"]) for event in events] == [
        ("ADDED", "dev-web"),
        ("DELETED", "prod-db"),
        ("MODIFIED", "prod-web"),
    ]
