"""Discovery order (issue 12): groups by APIService priority, as kube-aggregator lists them, in `/apis` and in
aggregated discovery (v2) alike.

Kube's rules (apiserver endpoints/discovery/aggregated handler, kube-aggregator's apis handler): groups by their
highest groupPriorityMinimum, highest first, equal ones by name, apiregistration.k8s.io first; versions by
versionPriority, then kube's version order. Built-in groups take kube-apiserver's apiVersionPriorities (core 18000,
apps 17800, events 17750, ... flowcontrol 16100), CRD groups 1000/100, an aggregated group its APIService's
numbers. kubectl resolves a resource that two groups serve to the group listed first.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pyop.testing import TestAPIServer
from testing_server.helpers import Api, deployment

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
KUBE_ORDER = [
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "resource.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "storagemigration.k8s.io",
]


def crd(group: str, plural: str, kind: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }


async def legacy_groups(api: Api) -> list[str]:
    status, body = await api.get("/apis")
    assert status == 200
    return [group["name"] for group in body["groups"]]


async def aggregated_groups(api: Api) -> list[str]:
    async with api.session.get("/apis", headers={"Accept": AGGREGATED}) as response:
        assert response.status == 200
        return [item["metadata"]["name"] for item in (await response.json())["items"]]


async def test_built_in_groups_come_in_kubes_priority_order(api: Api) -> None:
    assert await legacy_groups(api) == KUBE_ORDER
    assert await aggregated_groups(api) == KUBE_ORDER


async def test_crd_groups_follow_the_built_ins_and_an_apiservice_can_lead(server: TestAPIServer, api: Api) -> None:
    await api.create_ok(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd("aaa.example.com", "widgets", "Widget")
    )
    await server.register_api_service(
        "first.example.com", "v1", "https://127.0.0.1:9", insecure_skip_tls_verify=True, group_priority_minimum=17900
    )
    await server.register_api_service(
        "zzz.example.com", "v1", "https://127.0.0.1:9", insecure_skip_tls_verify=True, group_priority_minimum=1000
    )
    # 17900 outranks apps (17800); the CRD's 1000 ties with zzz's and the names decide.
    expected = [KUBE_ORDER[0], "first.example.com", *KUBE_ORDER[1:], "aaa.example.com", "zzz.example.com"]
    assert await legacy_groups(api) == expected
    assert await aggregated_groups(api) == expected


async def test_kubectl_resolves_a_shared_resource_name_to_the_higher_group(
    server: TestAPIServer, api: Api, tmp_path: Path
) -> None:
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl is not on PATH")
    from testing_server.kubectl.helpers import Kubectl

    # A CRD group sorting before "apps" by name serves "deployments" too.
    await api.create_ok(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd("aaa.example.com", "deployments", "Deployment")
    )
    await api.create_ok("/apis/apps/v1/namespaces/default/deployments", deployment("web"))
    body = {"apiVersion": "aaa.example.com/v1", "kind": "Deployment", "metadata": {"name": "other"}}
    await api.create_ok("/apis/aaa.example.com/v1/namespaces/default/deployments", body)
    kubectl = Kubectl(binary, server, tmp_path)
    shown = await kubectl("get", "deployments", "-o", "name")
    assert shown.stdout.split() == ["deployment.apps/web"]
    explicit = await kubectl("get", "deployments.aaa.example.com", "-o", "json")
    assert [item["metadata"]["name"] for item in json.loads(explicit.stdout)["items"]] == ["other"]
