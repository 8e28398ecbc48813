"""kubectl -> pyop's test API server (kube-apiserver with kube-aggregator) -> this project's aggregated API server,
on each storage backend: create, get (the strategy's table), watch, discovery, a user RBAC does not allow refused,
and a caller without kube-aggregator's request-header client certificate not trusted with its identity headers.

Written into a scaffolded project as tests/test_kubectl_e2e.py by tests/apiserver_scaffold/test_kubectl.py, which
sets KUBECTL (and ETCD_URL when an etcd runs on loopback). Its imports are sorted as the project sees them (pyop
third-party, wardle_operator first-party), the reverse of pyop's checkout: hence no import-order check here.
"""
# ruff: noqa: I001

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import aiohttp
import pytest
from pyop.apiserver import AggregatedServer, RecommendedOptions
from pyop.testing import TestAPIServer

from wardle_operator.apiserver import GROUP_VERSIONS

KUBECTL = os.environ["KUBECTL"]
SAMPLE = Path(__file__).resolve().parent.parent / "config" / "samples" / "wardle_v1alpha1_flunder.yaml"
BACKENDS = ["memory", "file", *(["etcd3"] if os.environ.get("ETCD_URL") else [])]


async def kubectl(server: TestAPIServer, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        KUBECTL, f"--kubeconfig={server.kubeconfig_path}", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, out.decode(), err.decode()


def options(backend: str, tmp_path: Path) -> RecommendedOptions:
    result = RecommendedOptions()
    result.storage.backend = backend
    if backend == "file":
        result.storage.path = str(tmp_path / "storage")
    if backend == "etcd3":
        result.storage.etcd_servers = [os.environ["ETCD_URL"]]
        result.storage.etcd_prefix = f"/kubectl-e2e-{os.getpid()}-{tmp_path.name}"
    return result


@pytest.mark.parametrize("backend", BACKENDS)
async def test_kubectl_through_the_aggregator(test_api_server: TestAPIServer, tmp_path: Path, backend: str) -> None:
    async with AggregatedServer.for_testing(GROUP_VERSIONS, test_api_server, options=options(backend, tmp_path)):
        code, out, err = await kubectl(test_api_server, "api-resources", "--api-group=wardle.example.com")
        assert code == 0 and "flunders" in out, err

        code, out, err = await kubectl(test_api_server, "create", "-n", "default", "-f", str(SAMPLE))
        assert code == 0 and "flunder.wardle.example.com/flunder-sample created" in out, err

        code, out, err = await kubectl(test_api_server, "get", "flunders", "-n", "default")
        assert code == 0, err
        header, row = out.splitlines()
        assert header.split() == ["NAME", "FOO", "AGE"] and row.split()[:2] == ["flunder-sample", "bar"]

        code, out, err = await kubectl(
            test_api_server, "get", "flunder", "flunder-sample", "-n", "default", "-o", "json"
        )
        stored = json.loads(out)
        assert stored["apiVersion"] == "wardle.example.com/v1alpha1" and stored["spec"] == {"foo": "bar"}

        watch = await asyncio.create_subprocess_exec(
            KUBECTL, f"--kubeconfig={test_api_server.kubeconfig_path}", "get", "flunders", "-n", "default",
            "--watch-only", "-o", "name", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            await asyncio.sleep(1.0)  # the watch is open before the change it must see
            code, out, err = await kubectl(
                test_api_server, "label", "flunder", "flunder-sample", "-n", "default", "colour=blue"
            )
            assert code == 0, err
            assert watch.stdout is not None
            line = await asyncio.wait_for(watch.stdout.readline(), 30)
            assert line.decode().strip() == "flunder.wardle.example.com/flunder-sample"
        finally:
            watch.kill()
            await watch.wait()

        test_api_server.add_user("nobody-token", "nobody")
        code, out, err = await kubectl(test_api_server, "--token=nobody-token", "get", "flunders", "-n", "default")
        assert code != 0 and "Forbidden" in err and 'User "nobody" cannot list resource "flunders"' in err


async def test_identity_headers_need_the_aggregators_client_certificate(test_api_server: TestAPIServer) -> None:
    async with (
        AggregatedServer.for_testing(GROUP_VERSIONS, test_api_server) as server,
        aiohttp.ClientSession() as session,
    ):
        headers = {"X-Remote-User": "system:admin", "X-Remote-Group": "system:masters"}
        url = f"{server.url}/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"
        async with session.get(url, headers=headers, ssl=False) as response:
            # Without kube-aggregator's client certificate the headers count for nothing: the caller is anonymous.
            assert response.status in (401, 403)
            body = await response.json()
            assert "system:admin" not in body.get("message", "")
