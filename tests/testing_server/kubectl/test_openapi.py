"""/openapi/v2 and /openapi/v3 as kube-apiserver serves them, for built-in kinds and CRDs; `kubectl explain`."""

from __future__ import annotations

from typing import Any

from pyop.api.definitions import load_definitions
from pyop.testing import TestAPIServer
from testing_server.helpers import Api
from testing_server.kubectl.helpers import WIDGET_CRD, Kubectl, clone

GVK = "x-kubernetes-group-version-kind"


async def _v3(api: Api, path: str) -> dict[str, Any]:
    status, index = await api.get("/openapi/v3")
    assert status == 200
    url = index["paths"][path]["serverRelativeURL"]
    assert url.startswith(f"/openapi/v3/{path}?hash=")
    status, document = await api.get(url.split("?")[0], hash=url.split("hash=")[1])
    assert status == 200
    return document


async def test_the_v3_index_lists_every_served_group_version(api: Api, server: TestAPIServer) -> None:
    server.add_crd(WIDGET_CRD)
    status, index = await api.get("/openapi/v3")
    assert status == 200
    paths = set(index["paths"])
    assert {"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/example.pyop.dev/v1"} <= paths
    status, groups = await api.get("/apis")
    served = {f"apis/{v['groupVersion']}" for group in groups["groups"] for v in group["versions"]}
    assert paths == served | {"api/v1"}


async def test_a_builtin_group_version_document(api: Api, server: TestAPIServer) -> None:
    document = await _v3(api, "apis/apps/v1")
    assert document["openapi"].startswith("3.0")
    schemas = document["components"]["schemas"]
    deployment = schemas["io.k8s.api.apps.v1.Deployment"]
    assert deployment[GVK] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    described = load_definitions(server.kubernetes_version)["io.k8s.api.apps.v1.Deployment"]["properties"]["spec"]
    # A reference with a description is wrapped in allOf, as kube-apiserver's v3 documents do.
    assert deployment["properties"]["spec"] == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}],
        "description": described["description"],
    }
    # The same definitions as the models, in OpenAPI form: no JSON-Schema null types, IntOrString a string format.
    assert schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"]["type"] == "integer"
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {"type": "string", "format": "int-or-string"}
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas  # self-contained: references resolve
    patch = document["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch[GVK] == {"group": "apps", "kind": "Deployment", "version": "v1"}
    assert patch["x-kubernetes-action"] == "patch"
    assert {p["name"] for p in patch["parameters"] if p["in"] == "query"} >= {
        "fieldValidation",
        "fieldManager",
        "force",
    }
    assert "application/apply-patch+yaml" in patch["requestBody"]["content"]


async def test_a_crd_document_follows_the_crd(api: Api, server: TestAPIServer) -> None:
    server.add_crd(WIDGET_CRD)
    document = await _v3(api, "apis/example.pyop.dev/v1")
    schemas = document["components"]["schemas"]
    widget = schemas["dev.pyop.example.v1.Widget"]
    assert widget[GVK] == [{"group": "example.pyop.dev", "kind": "Widget", "version": "v1"}]
    assert widget["properties"]["spec"]["properties"]["replicas"] == {
        "type": "integer",
        "description": "How many widgets.",
    }
    assert widget["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    assert schemas["dev.pyop.example.v1.WidgetList"][GVK][0]["kind"] == "WidgetList"
    assert "/apis/example.pyop.dev/v1/namespaces/{namespace}/widgets/{name}/status" in document["paths"]
    status, index = await api.get("/openapi/v3")
    old_url = index["paths"]["apis/example.pyop.dev/v1"]["serverRelativeURL"]

    changed = clone(WIDGET_CRD)
    properties = changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    properties["colour"] = {"type": "string"}
    server.add_crd(changed)
    updated = await _v3(api, "apis/example.pyop.dev/v1")
    assert (
        "colour" in updated["components"]["schemas"]["dev.pyop.example.v1.Widget"]["properties"]["spec"]["properties"]
    )
    # An old hash is answered as kube-apiserver does: moved permanently to the current document.
    async with api.session.get(old_url, allow_redirects=False) as response:
        assert response.status == 301
        assert response.headers["Location"].startswith("/openapi/v3/apis/example.pyop.dev/v1?hash=")
        assert response.headers["Location"] != old_url

    status, _ = await api.delete(
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{WIDGET_CRD['metadata']['name']}"
    )
    assert status == 200
    status, index = await api.get("/openapi/v3")
    assert "apis/example.pyop.dev/v1" not in index["paths"]
    status, _ = await api.get("/openapi/v3/apis/example.pyop.dev/v1")
    assert status == 404


async def test_v2_is_one_json_document_or_protobuf_and_refuses_other_types(api: Api, server: TestAPIServer) -> None:
    server.add_crd(WIDGET_CRD)
    status, document = await api.get("/openapi/v2")
    assert status == 200 and document["swagger"] == "2.0"
    definitions = document["definitions"]
    assert definitions["io.k8s.api.core.v1.ConfigMap"][GVK] == [{"group": "", "kind": "ConfigMap", "version": "v1"}]
    assert definitions["io.k8s.api.core.v1.ConfigMap"]["properties"]["metadata"]["$ref"] == (
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    )
    assert "dev.pyop.example.v1.Widget" in definitions
    assert "/api/v1/namespaces/{namespace}/configmaps/{name}" in document["paths"]
    protobuf = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"  # client-go's, answered as kube's
    async with api.session.get("/openapi/v2", headers={"Accept": protobuf}) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
        assert (await response.read())[:5] == b"\n\x032.0"  # Document.swagger (field 1) "2.0"
    async with api.session.get("/openapi/v2", headers={"Accept": "application/yaml"}) as response:
        assert response.status == 406
        assert (await response.json())["reason"] == "NotAcceptable"


async def test_kubectl_explain_a_builtin_field(kubectl: Kubectl) -> None:
    output = (await kubectl("explain", "deployment.spec")).stdout
    assert "KIND:       Deployment" in output and "VERSION:    v1" in output
    assert "FIELD: spec <DeploymentSpec>" in output
    assert "replicas\t<integer>" in output
    assert "selector\t<LabelSelector> -required-" in output


async def test_kubectl_explain_a_custom_kind(kubectl: Kubectl, server: TestAPIServer) -> None:
    server.add_crd(WIDGET_CRD)
    output = (await kubectl("explain", "widget.spec")).stdout
    assert "GROUP:      example.pyop.dev" in output and "KIND:       Widget" in output
    assert "WidgetSpec is what the user wants." in output
    assert "replicas\t<integer>\n    How many widgets." in output


async def test_kubectl_explain_from_v2_reads_the_protobuf_document(kubectl: Kubectl, server: TestAPIServer) -> None:
    """client-go reads /openapi/v2 as protobuf only (gnostic's Document), which kubectl decodes for v2 explain."""
    output = (await kubectl("explain", "deployment.spec.replicas", "--output", "plaintext-openapiv2")).stdout
    assert "KIND:     Deployment" in output and "FIELD:    replicas <integer>" in output
    server.add_crd(WIDGET_CRD)
    output = (await kubectl("explain", "widget.spec", "--output", "plaintext-openapiv2")).stdout
    assert "KIND:     Widget" in output and "VERSION:  example.pyop.dev/v1" in output
    assert "replicas\t<integer>\n     How many widgets." in output
