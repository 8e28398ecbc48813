"""kubectl against the aggregated server directly: discovery, Table columns, create with OpenAPI validation,
watch, and the errors kubectl prints."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
import yaml

from apiserver.helpers import kubectl
from pyop.apiserver import AggregatedServer
from pyop.testing import TestAPIServer

FLUNDER = """
apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata:
  name: kf
  namespace: default
spec:
  size: 4
"""


@pytest.fixture
def kubectl_binary() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not on PATH: these tests drive the server with the real kubectl")
    return found


def kubeconfig_for(server: AggregatedServer, token: str, folder: Path) -> Path:
    path = folder / "kubeconfig"
    config = server.kubeconfig_dict(token)
    config["contexts"][0]["context"]["namespace"] = "default"
    path.write_text(yaml.safe_dump(config))
    return path


async def test_create_get_and_table(
    server: AggregatedServer, core: TestAPIServer, kubectl_binary: str, tmp_path: Path
) -> None:
    config = kubeconfig_for(server, core.token, tmp_path)
    created = await kubectl(kubectl_binary, config, tmp_path, "create", "-f", "-", stdin=FLUNDER)
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == "flunder.wardle.example.com/kf created"
    got = await kubectl(kubectl_binary, config, tmp_path, "get", "flunders")
    assert got.returncode == 0, got.stderr
    assert [line.split() for line in got.stdout.splitlines()] == [
        ["NAME", "SIZE", "PHASE"],
        ["kf", "4"],
    ]  # a null cell prints empty
    invalid = await kubectl(
        kubectl_binary,
        config,
        tmp_path,
        "create",
        "-f",
        "-",
        stdin=FLUNDER.replace("size: 4", "size: 400").replace("kf", "kg"),
    )
    assert invalid.returncode == 1
    assert 'The Flunder "kg" is invalid: spec.size: Invalid value: 400' in invalid.stderr


async def test_watch_prints_changes(
    server: AggregatedServer, core: TestAPIServer, kubectl_binary: str, tmp_path: Path
) -> None:
    config = kubeconfig_for(server, core.token, tmp_path)
    watching = asyncio.create_task(
        kubectl(kubectl_binary, config, tmp_path, "get", "flunders", "--watch-only", "--request-timeout=3s")
    )
    await asyncio.sleep(1.0)
    created = await kubectl(kubectl_binary, config, tmp_path / "second", "create", "-f", "-", stdin=FLUNDER)
    assert created.returncode == 0, created.stderr
    result = await watching
    assert "kf" in result.stdout, (result.stdout, result.stderr)


async def test_forbidden_is_kubectls_message(
    server: AggregatedServer, core: TestAPIServer, kubectl_binary: str, tmp_path: Path
) -> None:
    core.add_user("bob-token", "bob")
    config = kubeconfig_for(server, "bob-token", tmp_path)
    result = await kubectl(kubectl_binary, config, tmp_path, "get", "flunders")
    assert result.returncode == 1
    assert (
        'flunders.wardle.example.com is forbidden: User "bob" cannot list resource "flunders" in API group '
        '"wardle.example.com" in the namespace "default"'
    ) in result.stderr
