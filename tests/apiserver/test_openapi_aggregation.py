"""OpenAPI through the test API server's aggregation: its /openapi/v2 has the aggregated server's kinds merged in
(shared meta definitions once), its /openapi/v3 index lists the aggregated group/version, and kubectl reads them:
``kubectl explain`` (v3, its default; v2 with ``--output=plaintext-openapiv2``, which reads the merged document as
gnostic protobuf) and ``kubectl apply``'s default ``--validate=strict``, which the aggregated server enforces."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from aggregator.helpers import wait_for_condition
from testing_server.helpers import connector

from apiserver.helpers import kubectl
from pyop.apiserver import AggregatedServer, APIGroupVersion
from pyop.testing import TestAPIServer

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
FLUNDER = "com.example.wardle.v1alpha1.Flunder"
UNKNOWN_FIELD = """
apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata:
  name: strict
  namespace: default
spec:
  size: 3
  colour: red
"""


@pytest_asyncio.fixture
async def aggregated(core: TestAPIServer, group: APIGroupVersion) -> AsyncIterator[AggregatedServer]:
    async with AggregatedServer.for_testing([group], core) as server:
        yield server


@pytest.fixture
def kubectl_binary() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not on PATH: these tests drive the servers with the real kubectl")
    return found


async def get_json(server: TestAPIServer, path: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {server.token}", "Accept": "application/json"}
    async with (
        aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session,
        session.get(path) as answer,
    ):
        assert answer.status == 200, await answer.text()
        return dict(await answer.json())


async def test_the_aggregated_servers_own_v2_has_its_kinds_and_what_they_reference(
    aggregated: AggregatedServer,
) -> None:
    own = json.loads(aggregated.openapi_documents.v2())
    assert {FLUNDER, f"{FLUNDER}List", f"{META}ObjectMeta", f"{META}Status", f"{META}Patch"} <= set(own["definitions"])
    assert "io.k8s.api.core.v1.Pod" not in own["definitions"]  # kube-apiserver's kinds are not its to describe
    refs = {ref for ref in json.dumps(own).split('"$ref": "#/definitions/')[1:]}
    assert all(ref.split('"')[0] in own["definitions"] for ref in refs)  # self-contained
    assert "/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders" in own["paths"]


async def test_v2_merges_the_aggregated_document_with_shared_definitions_once(
    aggregated: AggregatedServer, core: TestAPIServer
) -> None:
    merged = await get_json(core, "/openapi/v2")
    assert "/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders/{name}" in merged["paths"]
    assert "/api/v1/namespaces/{namespace}/pods" in merged["paths"]
    assert merged["definitions"][FLUNDER]["properties"]["spec"]["properties"]["size"]["maximum"] == 100
    assert not [name for name in merged["definitions"] if "_v" in name.rsplit(".", 1)[-1]]  # nothing renamed
    local = json.loads(core.openapi_documents.v2())
    assert merged["definitions"][f"{META}ObjectMeta"] == local["definitions"][f"{META}ObjectMeta"]
    assert FLUNDER not in local["definitions"]


async def test_v3_index_lists_the_aggregated_group_version(aggregated: AggregatedServer, core: TestAPIServer) -> None:
    index = await get_json(core, "/openapi/v3")
    url = index["paths"]["apis/wardle.example.com/v1alpha1"]["serverRelativeURL"]
    document = await get_json(core, url)
    assert FLUNDER in document["components"]["schemas"]


async def test_kubectl_explain_reads_the_aggregated_schema_through_the_cluster(
    aggregated: AggregatedServer, core: TestAPIServer, kubectl_binary: str, tmp_path: Path
) -> None:
    explained = await kubectl(kubectl_binary, core.kubeconfig_path, tmp_path, "explain", "flunders.spec.size")
    assert explained.returncode == 0, explained.stderr
    assert "KIND:       Flunder" in explained.stdout
    assert "GROUP:      wardle.example.com" in explained.stdout and "VERSION:    v1alpha1" in explained.stdout
    assert "FIELD: size <integer>" in explained.stdout


async def test_kubectl_explain_reads_the_merged_v2_as_protobuf(
    aggregated: AggregatedServer, core: TestAPIServer, kubectl_binary: str, tmp_path: Path
) -> None:
    explained = await kubectl(
        kubectl_binary, core.kubeconfig_path, tmp_path, "explain", "flunders.spec", "--output=plaintext-openapiv2"
    )
    assert explained.returncode == 0, explained.stderr
    assert "KIND:     Flunder" in explained.stdout and "VERSION:  wardle.example.com/v1alpha1" in explained.stdout
    assert "reference\t<string>\n     The name of another flunder (or fischer) this one refers to." in explained.stdout
    builtin = await kubectl(
        kubectl_binary, core.kubeconfig_path, tmp_path, "explain", "pods.spec.nodeName", "--output=plaintext-openapiv2"
    )
    assert builtin.returncode == 0 and "FIELD:    nodeName <string>" in builtin.stdout  # the local part, merged


async def test_kubectl_apply_strict_refuses_an_unknown_field_and_applies_a_known_one(
    aggregated: AggregatedServer, core: TestAPIServer, kubectl_binary: str, tmp_path: Path
) -> None:
    refused = await kubectl(kubectl_binary, core.kubeconfig_path, tmp_path, "apply", "-f", "-", stdin=UNKNOWN_FIELD)
    assert refused.returncode != 0
    assert 'unknown field "spec.colour"' in refused.stderr
    assert aggregated.operations.store.get("flunders.wardle.example.com", "default", "strict") is None
    known = UNKNOWN_FIELD.replace("  colour: red\n", "")
    applied = await kubectl(kubectl_binary, core.kubeconfig_path, tmp_path, "apply", "-f", "-", stdin=known)
    assert applied.returncode == 0, applied.stderr
    assert "flunder.wardle.example.com/strict created" in applied.stdout


async def test_a_server_that_stops_answering_leaves_the_merged_documents(
    aggregated: AggregatedServer, core: TestAPIServer
) -> None:
    assert any(path.startswith("/apis/wardle.example.com/") for path in (await get_json(core, "/openapi/v2"))["paths"])
    await aggregated.stop()
    await wait_for_condition(core, "v1alpha1.wardle.example.com", "False", "FailedDiscoveryCheck")
    merged = await get_json(core, "/openapi/v2")
    assert not any(path.startswith("/apis/wardle.example.com/") for path in merged["paths"])
    assert FLUNDER not in merged["definitions"]
    assert "apis/wardle.example.com/v1alpha1" not in (await get_json(core, "/openapi/v3"))["paths"]
