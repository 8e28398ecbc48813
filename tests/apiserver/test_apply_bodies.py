"""Server-side apply bodies: JSON (what clients send, read by the JSON decoder), YAML flow style that is not JSON,
and block YAML all apply alike."""

from __future__ import annotations

from pyop.client import Client
from pyop.testing import TestAPIServer

APPLY = "application/apply-patch+yaml"
BODIES = {
    "json": '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "json"}, "data": {"x": "1"}}',
    "flow": '{apiVersion: v1, kind: ConfigMap, metadata: {name: flow}, data: {x: "1"}}',
    "block": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: block\ndata:\n  x: '1'\n",
}


async def test_json_flow_and_block_bodies_apply_alike() -> None:
    async with TestAPIServer() as server, Client(server.client_config()) as client:
        for name, body in BODIES.items():
            path = f"/api/v1/namespaces/default/configmaps/{name}"
            applied = await client.transport.request(
                "PATCH", path, params={"fieldManager": "test"}, body=body, content_type=APPLY
            )
            assert applied["data"] == {"x": "1"}, name
            assert applied["metadata"]["managedFields"][0]["operation"] == "Apply"
