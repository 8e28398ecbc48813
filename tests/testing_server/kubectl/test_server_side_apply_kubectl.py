"""`kubectl apply --server-side` against the test server: kubectl's own conflict report, --force-conflicts, and
the managers kubectl then shows (field ownership itself is tested in tests/testing_server/test_server_side_apply.py).
"""

from __future__ import annotations

import json

from testing_server.kubectl.helpers import Kubectl

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1"}]}
"""


async def test_kubectl_server_side_apply_reports_conflicts_and_forces(kubectl: Kubectl) -> None:
    applied = await kubectl("apply", "--server-side", "-f", "-", stdin=DEPLOYMENT % 2)
    assert "deployment.apps/web serverside-applied" in applied.stdout
    refused = await kubectl(
        "apply", "--server-side", "--field-manager=other", "-f", "-", stdin=DEPLOYMENT % 3, check=False
    )
    assert refused.returncode == 1
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas' in refused.stderr
    await kubectl(
        "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-", stdin=DEPLOYMENT % 3
    )
    shown = json.loads((await kubectl("get", "deployment", "web", "-o", "json", "--show-managed-fields")).stdout)
    assert shown["spec"]["replicas"] == 3
    owners = {entry["manager"]: entry["fieldsV1"] for entry in shown["metadata"]["managedFields"]}
    assert set(owners) == {"kubectl", "other"}
    assert "f:replicas" in owners["other"]["f:spec"] and "f:replicas" not in owners["kubectl"]["f:spec"]
