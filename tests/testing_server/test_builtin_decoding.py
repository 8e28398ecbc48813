"""Built-in objects decoded into their types: wrong JSON types are 400s, unknown fields follow fieldValidation.

Messages are kube-apiserver's: `<Kind> in version "<v>" cannot be handled as a <Kind>: <Go decoder error>`, and
`unknown field "<path>"` per dropped field, as Warning headers (`299 - "..."`, Warn: the API's default) or in the
400 of `fieldValidation=Strict` (`strict decoding error: ...`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pyop.apiserver.registry.operations import WriteOptions
from pyop.testing import TestAPIServer
from testing_server.helpers import Api
from testing_server.test_crds import CRD_PATH, WIDGETS, widget, widget_crd

NS = "/api/v1/namespaces/default"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
MERGE = "application/merge-patch+json"


async def send(api: Api, method: str, path: str, body: Any, **params: str) -> tuple[int, Any, list[str]]:
    """(status, body, Warning header values) of one request."""
    headers = {"Content-Type": MERGE if method == "PATCH" else "application/json"}
    async with api.session.request(method, path, data=json.dumps(body), headers=headers, params=params) as response:
        return response.status, await response.json(), response.headers.getall("Warning", [])


def deployment(**container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "x:1", **container}]},
            },
        },
    }


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        (
            f"{NS}/configmaps",
            {"metadata": {"name": "c"}, "data": {"n": 3}},
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct '
            "field ConfigMap.data of type string",
        ),
        (
            f"{NS}/secrets",
            {"metadata": {"name": "s"}, "data": {"password": "not base64!"}},
            'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3',
        ),
        (
            DEPLOYMENTS,
            {"metadata": {"name": "d"}, "spec": {"replicas": "3"}},
            'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go '
            "struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            f"{NS}/configmaps",
            {"metadata": {"name": "c", "labels": {"a": True}}},
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal bool into Go struct '
            "field ObjectMeta.metadata.labels of type string",
        ),
        (
            DEPLOYMENTS,
            deployment(resources={"limits": {"cpu": "lots"}}),
            'Deployment in version "v1" cannot be handled as a Deployment: quantities must match the regular '
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
    ],
    ids=["configmap-number", "secret-not-base64", "replicas-string", "label-bool", "bad-quantity"],
)
async def test_values_of_the_wrong_type_are_a_bad_request(
    api: Api, path: str, body: dict[str, Any], message: str
) -> None:
    status, error, _ = await send(api, "POST", path, body)
    assert status == 400
    assert error["reason"] == "BadRequest"
    assert error["message"] == message
    listed = await api.get(path)
    assert listed[1]["items"] == []


async def test_unknown_fields_are_dropped_with_a_warning_by_default(api: Api) -> None:
    body = deployment(bogus=1)
    body["spec"]["extra"] = {"x": 1}
    status, created, warnings = await send(api, "POST", DEPLOYMENTS, body)
    assert status == 201
    assert warnings == [
        r'299 - "unknown field \"spec.template.spec.containers[0].bogus\""',
        r'299 - "unknown field \"spec.extra\""',
    ]
    assert "extra" not in created["spec"] and "bogus" not in created["spec"]["template"]["spec"]["containers"][0]
    status, patched, warnings = await send(api, "PATCH", f"{DEPLOYMENTS}/d", {"spec": {"paused": True, "nope": 1}})
    assert status == 200 and warnings == [r'299 - "unknown field \"spec.nope\""']
    assert patched["spec"]["paused"] is True and "nope" not in patched["spec"]


async def test_strict_field_validation_refuses_unknown_fields(api: Api) -> None:
    status, error, _ = await send(api, "POST", DEPLOYMENTS, deployment(bogus=1), fieldValidation="Strict")
    assert status == 400
    assert error["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "spec.template.spec.containers[0].bogus"'
    )
    status, _, warnings = await send(api, "POST", DEPLOYMENTS, deployment(), fieldValidation="Strict")
    assert status == 201 and warnings == []


async def test_ignore_field_validation_drops_silently(api: Api) -> None:
    status, created, warnings = await send(api, "POST", DEPLOYMENTS, deployment(bogus=1), fieldValidation="Ignore")
    assert status == 201 and warnings == []
    assert "bogus" not in created["spec"]["template"]["spec"]["containers"][0]


async def test_an_unsupported_field_validation_value_is_a_bad_request(api: Api) -> None:
    status, error, _ = await send(api, "POST", DEPLOYMENTS, deployment(), fieldValidation="Loud")
    assert status == 400 and '"Loud"' in error["message"]


async def test_custom_resources_warn_about_dropped_fields_too(api: Api) -> None:
    await api.create_ok(CRD_PATH, widget_crd())
    status, created, warnings = await send(api, "POST", WIDGETS, widget("w", unknown="x"))
    assert status == 201 and warnings == [r'299 - "unknown field \"spec.unknown\""']
    assert "unknown" not in created["spec"]
    status, _, warnings = await send(api, "POST", WIDGETS, widget("quiet", unknown="x"), fieldValidation="Ignore")
    assert status == 201 and warnings == []
    status, _, warnings = await send(api, "POST", WIDGETS, widget("known"))
    assert status == 201 and warnings == []


async def test_nulls_and_quantities_come_back_as_a_cluster_encodes_them(api: Api) -> None:
    body = deployment(resources={"requests": {"cpu": 0.5, "memory": "1024Mi"}, "limits": {"cpu": "1000m"}})
    body["metadata"]["labels"] = None
    body["spec"]["paused"] = None
    status, created, _ = await send(api, "POST", DEPLOYMENTS, body)
    assert status == 201
    assert "labels" not in created["metadata"] and "paused" not in created["spec"]
    assert created["spec"]["template"]["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"cpu": "1"},
    }


async def test_a_reused_write_options_reports_each_writes_own_warnings(server: TestAPIServer) -> None:
    configmaps = server.resources.lookup("", "v1", "configmaps")
    options = WriteOptions(field_manager="t")
    server.operations.create(configmaps, "default", {"metadata": {"name": "a"}, "bogus": 1}, options)
    assert options.warnings == ['unknown field "bogus"']
    server.operations.create(configmaps, "default", {"metadata": {"name": "b"}}, options)
    assert options.warnings == []
