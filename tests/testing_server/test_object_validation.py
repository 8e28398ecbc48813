"""kube-apiserver's validation of metadata and of the built-in kinds operators write (issue 12 item 5): what a
cluster refuses with 422 is refused here, with its field paths and messages."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest

from pyop.api.validation import label_value_problems, qualified_name_problems
from pyop.testing import TestAPIServer
from testing_server.helpers import Api, official_client

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"
SHIPS = "/apis/fleet.example.com/v1/namespaces/default/ships"


def deployment(name: str = "web", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }
    body["spec"].update(spec)
    return body


def causes(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["reason"], c.get("field", ""), c["message"]) for c in body["details"]["causes"]]


async def test_a_selector_that_does_not_match_the_template_is_422(api: Api) -> None:
    body = deployment(selector={"matchLabels": {"app": "other"}})
    code, status = await api.post(DEPLOYMENTS, body)
    assert code == 422 and status["reason"] == "Invalid"
    assert status["message"] == (
        'Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"web"}: `selector` does not match template `labels`'
    )
    assert causes(status) == [
        (
            "FieldValueInvalid",
            "spec.template.metadata.labels",
            'Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
        )
    ]


async def test_missing_and_empty_selectors_and_containers(api: Api) -> None:
    missing = deployment()
    del missing["spec"]["selector"]
    missing["spec"]["template"]["spec"]["containers"] = []
    code, status = await api.post(DEPLOYMENTS, missing)
    assert code == 422
    assert causes(status) == [
        ("FieldValueRequired", "spec.selector", "Required value"),
        ("FieldValueRequired", "spec.template.spec.containers", "Required value"),
    ]
    assert status["message"].endswith("[spec.selector: Required value, spec.template.spec.containers: Required value]")
    code, status = await api.post(DEPLOYMENTS, deployment(selector={}))
    assert code == 422
    assert causes(status)[0][2] == (
        "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"
    )
    twins = deployment()
    twins["spec"]["template"]["spec"]["containers"] = [{"name": "c", "image": "x"}, {"name": "c", "image": "y"}]
    code, status = await api.post(DEPLOYMENTS, twins)
    assert code == 422
    assert causes(status) == [("FieldValueDuplicate", "spec.template.spec.containers[1].name", 'Duplicate value: "c"')]


async def test_a_deployments_selector_is_immutable(api: Api) -> None:
    created = await api.create_ok(DEPLOYMENTS, deployment())
    changed = copy.deepcopy(created)
    changed["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "front"}}
    changed["spec"]["template"]["metadata"]["labels"]["tier"] = "front"
    code, status = await api.put(f"{DEPLOYMENTS}/web", changed)
    assert code == 422
    assert causes(status) == [
        (
            "FieldValueInvalid",
            "spec.selector",
            'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"front"}, '
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
        )
    ]
    replicas = copy.deepcopy(created)
    replicas["spec"]["replicas"] = 4  # everything else may change
    code, _ = await api.put(f"{DEPLOYMENTS}/web", replicas)
    assert code == 200


async def test_an_immutable_configmaps_data_and_mark_cannot_change(api: Api) -> None:
    created = await api.create_ok(
        CONFIGMAPS,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}, "immutable": True},
    )
    edited = {**created, "data": {"a": "2"}}
    code, status = await api.put(f"{CONFIGMAPS}/c", edited)
    assert code == 422
    assert causes(status) == [("FieldValueForbidden", "data", "Forbidden: field is immutable when `immutable` is set")]
    code, status = await api.patch(f"{CONFIGMAPS}/c", {"immutable": False}, "application/merge-patch+json")
    assert code == 422
    assert causes(status) == [
        ("FieldValueForbidden", "immutable", "Forbidden: field is immutable when `immutable` is set")
    ]
    labelled = {**created, "metadata": {**created["metadata"], "labels": {"ok": "yes"}}}
    code, _ = await api.put(f"{CONFIGMAPS}/c", labelled)  # metadata may still change
    assert code == 200
    secret = await api.create_ok(
        SECRETS,
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "YQ=="}, "immutable": True},
    )
    code, status = await api.put(f"{SECRETS}/s", {**secret, "data": {"k": "Yg=="}})
    assert code == 422 and causes(status)[0][1] == "data"


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (
            {"labels": {"app": "bad value!"}},
            (
                "metadata.labels",
                'Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric '
                "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ),
        ),
        (
            {"labels": {"Example.com/x": "v"}},
            (
                "metadata.labels",
                'Invalid value: "Example.com/x": prefix part a lowercase RFC 1123 subdomain must consist of lower '
                "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
                "(e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ),
        ),
        (
            {"annotations": {"-bad": "v"}},
            (
                "metadata.annotations",
                "Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
        ),
        (
            {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": ""}]},
            ("metadata.ownerReferences.uid", 'Invalid value: "": uid must not be empty'),
        ),
    ],
)
async def test_metadata_of_every_kind_is_validated(
    api: Api, metadata: dict[str, Any], expected: tuple[str, str]
) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m", **metadata}}
    code, status = await api.post(CONFIGMAPS, body)
    assert code == 422, status
    assert [(field, message) for _, field, message in causes(status)] == [expected]


def test_the_string_checks_are_apimachinerys() -> None:
    assert qualified_name_problems("example.com/name") == []
    assert qualified_name_problems("a/b/c")[0].startswith("a qualified name must consist of")
    assert qualified_name_problems("x" * 64) == ["name part must be no more than 63 characters"]
    assert label_value_problems("") == [] and label_value_problems("ok.value_1") == []
    assert label_value_problems("x" * 64)[0] == "must be no more than 63 characters"


async def test_the_official_client_sees_the_422_from_a_thread(server: TestAPIServer) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    apps = kubernetes.client.AppsV1Api(official_client(server))
    body = deployment(selector={"matchLabels": {"app": "other"}})

    def create() -> Any:
        try:
            apps.create_namespaced_deployment("default", body)
        except kubernetes.client.exceptions.ApiException as error:
            return error
        return None

    error = await asyncio.to_thread(create)
    assert error is not None and error.status == 422
    status = json.loads(error.body)
    assert status["details"]["causes"][0]["field"] == "spec.template.metadata.labels"


async def test_custom_resources_metadata_is_validated_too(server: TestAPIServer, api: Api) -> None:
    from pyop.testing import schemaless_crd

    server.add_crd(schemaless_crd("fleet.example.com", "Ship", "ships"))
    code, status = await api.post(
        SHIPS,
        {"apiVersion": "fleet.example.com/v1", "kind": "Ship", "metadata": {"name": "s", "labels": {"a": "b c"}}},
    )
    assert code == 422 and causes(status)[0][1] == "metadata.labels"
