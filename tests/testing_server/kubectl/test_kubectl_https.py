"""HTTPS by default: kubectl, the official client and pyop's client use the kubeconfig the server writes."""

from __future__ import annotations

import asyncio
import base64
import ssl
from pathlib import Path

import aiohttp
import yaml

from pyop.client import Client, load_config
from pyop.testing import TestAPIServer
from testing_server.helpers import configmap
from testing_server.kubectl.helpers import Kubectl, table

DEPLOYMENT_YAML = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80}]
"""


async def test_the_kubeconfig_names_an_https_server_its_ca_and_a_token(server: TestAPIServer) -> None:
    config = yaml.safe_load(server.kubeconfig_path.read_text())
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == server.url and server.url.startswith("https://127.0.0.1:")
    assert config["users"][0]["user"] == {"token": server.token}
    authority = base64.b64decode(cluster["certificate-authority-data"]).decode()
    context = ssl.create_default_context(cadata=authority)  # the CA alone verifies the server
    async with aiohttp.ClientSession() as session, session.get(f"{server.url}/healthz", ssl=context) as response:
        assert response.status == 200
    async with aiohttp.ClientSession() as session:  # the system's trust store does not
        try:
            await session.get(f"{server.url}/healthz")
        except aiohttp.ClientConnectorCertificateError:
            pass
        else:
            raise AssertionError("a client without the CA accepted the self-signed certificate")


async def test_plain_http_stays_an_option() -> None:
    async with TestAPIServer(tls=False) as server:
        assert server.url.startswith("http://") and server.ssl_context() is None
        config = await load_config(server.kubeconfig_path)
        async with Client(config) as client:
            namespaces = await client.transport.request("GET", "/api/v1/namespaces")
        assert {item["metadata"]["name"] for item in namespaces["items"]} >= {"default", "kube-system"}


async def test_pyop_client_from_the_kubeconfig_and_from_client_config(server: TestAPIServer) -> None:
    for config in (await load_config(server.kubeconfig_path), server.client_config()):
        async with Client(config) as client:
            default = await client.transport.request("GET", "/api/v1/namespaces/default")
        assert default["status"]["phase"] == "Active"


async def test_kubectl_get_namespaces(kubectl: Kubectl) -> None:
    rows = table((await kubectl("get", "ns")).stdout)
    assert rows[0] == ["NAME", "STATUS", "AGE"]
    assert [row[:2] for row in rows[1:]] == [
        ["default", "Active"],
        ["kube-node-lease", "Active"],
        ["kube-public", "Active"],
        ["kube-system", "Active"],
    ]


async def test_kubectl_create_apply_and_get_all(kubectl: Kubectl, server: TestAPIServer) -> None:
    created = await kubectl("create", "-f", "-", stdin=DEPLOYMENT_YAML)
    assert created.stdout.splitlines() == ["deployment.apps/web created", "service/web created"]
    again = await kubectl("apply", "-f", "-", stdin=DEPLOYMENT_YAML.replace("replicas: 2", "replicas: 3"))
    # Objects made by `create` lack the last-applied annotation: kubectl warns and patches both, as on a cluster.
    assert again.stdout.splitlines() == ["deployment.apps/web configured", "service/web configured"]
    assert "missing the kubectl.kubernetes.io/last-applied-configuration annotation" in again.stderr
    unchanged = await kubectl("apply", "-f", "-", stdin=DEPLOYMENT_YAML.replace("replicas: 2", "replicas: 3"))
    assert unchanged.stdout.splitlines() == ["deployment.apps/web unchanged", "service/web unchanged"]
    stored = server.store.get("deployments.apps", "default", "web")
    assert stored is not None and stored["spec"]["replicas"] == 3
    sections = (await kubectl("get", "all", "-A")).stdout.strip().split("\n\n")
    services, deployments = table(sections[0]), table(sections[1])
    assert services[0] == ["NAMESPACE", "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert services[1][:6] == ["default", "service/kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    assert services[2][:3] == ["default", "service/web", "ClusterIP"] and services[2][4:6] == ["<none>", "80/TCP"]
    assert deployments[0] == ["NAMESPACE", "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert deployments[1][:5] == ["default", "deployment.apps/web", "0/3", "0", "0"]


async def test_kubectl_apply_validates_strictly_on_the_server(kubectl: Kubectl, server: TestAPIServer) -> None:
    """kubectl finds the fieldValidation parameter in /openapi/v3 and leaves validation to the server."""
    server.reset_requests()
    bad = await kubectl(
        "apply", "-f", "-", stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\nbogus: 1\n", check=False
    )
    assert bad.returncode == 1
    assert 'strict decoding error: unknown field "bogus"' in bad.stderr
    posts = [record for record in server.requests if record.method == "POST"]
    assert posts and "fieldValidation=Strict" in posts[0].query
    assert any(record.path == "/openapi/v3/api/v1" for record in server.requests)


async def test_kubectl_typed_create_sends_protobuf_the_server_decodes(kubectl: Kubectl) -> None:
    """`kubectl create namespace|configmap|deployment` encode protobuf (more in tests/protobuf)."""
    for args in (("namespace", "x"), ("configmap", "c", "--from-literal=a=b"), ("deployment", "d", "--image=nginx")):
        result = await kubectl("create", *args)
        assert result.stdout.strip().endswith(f"/{args[1]} created")


async def test_kubectl_version_reads_the_server_version(kubectl: Kubectl, server: TestAPIServer) -> None:
    output = (await kubectl("version")).stdout
    assert f"Server Version: v{server.kubernetes_version}.0-pyop-test" in output


async def test_the_official_kubernetes_client_from_the_kubeconfig(server: TestAPIServer) -> None:
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    def use() -> tuple[list[str], str]:
        api_client = k8s_config.new_client_from_config(config_file=str(server.kubeconfig_path))
        core = k8s_client.CoreV1Api(api_client)
        core.create_namespaced_config_map("default", configmap("official", data={"k": "v"}))
        names = [item.metadata.name for item in core.list_namespace().items]
        read = core.read_namespaced_config_map("official", "default")
        api_client.close()
        return names, read.data["k"]

    names, value = await asyncio.to_thread(use)
    assert "kube-system" in names and value == "v"
    assert server.store.get("configmaps", "default", "official") is not None


async def test_the_official_dynamic_client_discovers_and_reads_a_custom_resource(server: TestAPIServer) -> None:
    """kubernetes.dynamic discovers through /api and /apis (unaggregated) over the kubeconfig's TLS."""
    from kubernetes import config as k8s_config
    from kubernetes import dynamic

    from testing_server.kubectl.helpers import WIDGET_CRD, widget

    server.add_crd(WIDGET_CRD)

    def use() -> tuple[str, int]:
        api_client = k8s_config.new_client_from_config(config_file=str(server.kubeconfig_path))
        client = dynamic.DynamicClient(api_client)
        widgets = client.resources.get(api_version="example.pyop.dev/v1", kind="Widget")
        widgets.create(body=widget("w1", replicas=2), namespace="default")
        read = widgets.get(name="w1", namespace="default")
        api_client.close()
        return read.metadata.name, read.spec.replicas

    assert await asyncio.to_thread(use) == ("w1", 2)


async def test_why_https_kubectl_sends_no_token_over_plain_http(kubectl_binary: str, tmp_path: Path) -> None:
    async with TestAPIServer(tls=False) as server:
        result = await Kubectl(kubectl_binary, server, tmp_path)("get", "ns", check=False)
    assert result.returncode == 1
    assert "the server has asked for the client to provide credentials" in result.stderr
