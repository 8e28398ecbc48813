"""APIServices kube-aggregator's validation refuses are 422s here too, with its field paths and messages; the
service port defaults to 443."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from testing_server.helpers import Api

APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"
GOOD_SPEC: dict[str, Any] = {
    "group": "wardle.example.com",
    "version": "v1alpha1",
    "service": {"namespace": "default", "name": "wardle"},
    "groupPriorityMinimum": 1000,
    "versionPriority": 15,
}


@pytest.mark.parametrize(
    ("name", "spec", "field", "message"),
    [
        (
            "wardle",
            {},
            "metadata.name",
            'Invalid value: "wardle": must be `spec.version+"."+spec.group`: "v1alpha1.wardle.example.com"',
        ),
        (
            "v1alpha1.wardle.example.com",
            {"groupPriorityMinimum": 0},
            "spec.groupPriorityMinimum",
            "Invalid value: 0: must be positive and less than 20000",
        ),
        (
            "v1alpha1.wardle.example.com",
            {"versionPriority": 1001},
            "spec.versionPriority",
            "Invalid value: 1001: must be positive and less than 1000",
        ),
        (
            "v1alpha1.wardle.example.com",
            {"insecureSkipTLSVerify": True, "caBundle": base64.b64encode(b"pem").decode()},
            "spec.insecureSkipTLSVerify",
            "Invalid value: true: may not be true if caBundle is present",
        ),
        (
            "v1alpha1.wardle.example.com",
            {"service": {"namespace": "default"}},
            "spec.service.name",
            "Required value",
        ),
        (
            "v1alpha1.wardle.example.com",
            {"service": None, "insecureSkipTLSVerify": True},
            "spec.insecureSkipTLSVerify",
            "Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
        ),
        (
            "1v.wardle.example.com",
            {"version": "1v"},
            "spec.version",
            "Invalid value: \"1v\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
            "with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
            "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ),
    ],
)
async def test_refused_as_kube_aggregator_refuses(
    api: Api, name: str, spec: dict[str, Any], field: str, message: str
) -> None:
    body = {"metadata": {"name": name}, "spec": {k: v for k, v in {**GOOD_SPEC, **spec}.items() if v is not None}}
    status, error = await api.post(APISERVICES, body)
    assert status == 422, error
    assert {
        "reason": "FieldValueInvalid" if message.startswith("Invalid") else "FieldValueRequired",
        "message": message,
        "field": field,
    } in error["details"]["causes"]


async def test_a_valid_apiservice_is_stored(api: Api) -> None:
    created = await api.create_ok(APISERVICES, {"metadata": {"name": "v1alpha1.wardle.example.com"}, "spec": GOOD_SPEC})
    assert created["spec"]["service"] == {"namespace": "default", "name": "wardle", "port": 443}  # defaulted
