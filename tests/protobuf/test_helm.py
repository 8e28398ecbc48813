"""Helm stores each release as a Secret through client-go's protobuf: install, upgrade and uninstall work."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from testing_server.helpers import GUARD, Api

from pyop.apiserver.endpoints.protobuf import negotiation
from pyop.testing import TestAPIServer

CHART = {
    "Chart.yaml": "apiVersion: v2\nname: tiny\nversion: 0.1.0\n",
    "templates/config.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\n"
        'data:\n  greeting: {{ .Values.greeting | default "hello" | quote }}\n'
    ),
}
SECRETS = "/api/v1/namespaces/default/secrets"


async def _helm(helm: str, server: TestAPIServer, home: Path, *args: str) -> str:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "KUBECONFIG": str(server.kubeconfig_path),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }
    process = await asyncio.create_subprocess_exec(
        helm, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    out, err = await asyncio.wait_for(process.communicate(), 6 * GUARD)
    assert process.returncode == 0, f"helm {' '.join(args)} failed:\n{err.decode()}"
    return out.decode()


@pytest.mark.parametrize("answers", ["json", "protobuf"])
async def test_helm_install_upgrade_uninstall_store_release_secrets(
    helm: str, server: TestAPIServer, api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answers: str
) -> None:
    """`answers`: what the server sends back. It picks JSON when the client accepts it; `protobuf` makes it prefer
    protobuf (kube-apiserver's choice for client-go), so Helm's Go decoder reads the encoder's release Secrets."""
    in_protobuf: list[str] = []

    def prefer_protobuf(accept: str) -> bool:
        if negotiation.PROTOBUF_TYPE not in accept:
            return False
        in_protobuf.append(accept)
        return True

    if answers == "protobuf":
        monkeypatch.setattr(negotiation, "wants_protobuf", prefer_protobuf)
    chart = tmp_path / "chart"
    for name, text in CHART.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    await _helm(helm, server, tmp_path, "install", "demo", str(chart), "--namespace", "default")
    await _helm(helm, server, tmp_path, "upgrade", "demo", str(chart), "--namespace", "default", "--set", "greeting=hi")
    _status, secrets = await api.get(SECRETS, labelSelector="owner=helm,name=demo")
    releases = sorted((item["metadata"]["name"], item["type"]) for item in secrets["items"])
    assert releases == [
        ("sh.helm.release.v1.demo.v1", "helm.sh/release.v1"),
        ("sh.helm.release.v1.demo.v2", "helm.sh/release.v1"),
    ]
    _status, config = await api.get("/api/v1/namespaces/default/configmaps/demo-config")
    assert config["data"] == {"greeting": "hi"}
    assert "demo" in await _helm(helm, server, tmp_path, "list", "--namespace", "default", "--short")
    await _helm(helm, server, tmp_path, "uninstall", "demo", "--namespace", "default")
    _status, secrets = await api.get(SECRETS, labelSelector="owner=helm")
    assert secrets["items"] == []
    assert bool(in_protobuf) == (answers == "protobuf")  # Helm's client-go did read protobuf answers
