"""`pyop test-server`: the server in the foreground with a project's CRDs, a kubeconfig, a clean stop."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pyop.client import APIResource, Client, load_config
from pyop_scaffold.cli.app import app
from testing_server.kubectl.helpers import WIDGET_CRD

GUARD = 60.0  # seconds: a failure guard, never an expectation
ENDPOINTS = APIResource("", "v1", "Endpoints", "endpoints", True)


class Running:
    """A `pyop test-server` subprocess, read until it says how to use it."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.banner: list[str] = []

    async def ready(self) -> list[str]:
        assert self.process.stdout is not None
        while not self.banner or not self.banner[-1].startswith("State is kept in memory"):
            line = await asyncio.wait_for(self.process.stdout.readline(), GUARD)
            if not line:
                assert self.process.stderr is not None
                raise AssertionError(f"test-server ended: {(await self.process.stderr.read()).decode()}")
            self.banner.append(line.decode().rstrip("\n"))
        return self.banner

    async def stop(self, signum: signal.Signals) -> int:
        self.process.send_signal(signum)
        return await asyncio.wait_for(self.process.wait(), GUARD)


async def _start(*args: str, cwd: Path) -> Running:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "pyop_scaffold",
        "test-server",
        *args,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    return Running(process)


def _write_crd(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "widgets.yaml").write_text(yaml.safe_dump(WIDGET_CRD))
    return folder


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_runs_until_a_signal_with_the_given_crds(tmp_path: Path, signum: signal.Signals) -> None:
    crds = _write_crd(tmp_path / "crds")
    kubeconfig = tmp_path / "out" / "kubeconfig"
    running = await _start("--crds", str(crds), "--kubeconfig", str(kubeconfig), cwd=tmp_path)
    try:
        banner = await running.ready()
        assert (
            banner[0].startswith("pyop test API server (Kubernetes ")
            and " listening on https://127.0.0.1:" in banner[0]
        )
        assert banner[1] == "CRDs installed: widgets.example.pyop.dev"
        assert f"  export KUBECONFIG={kubeconfig}" in banner
        async with Client(await load_config(kubeconfig)) as client:
            listed = await client.transport.request("GET", "/apis/example.pyop.dev/v1/namespaces/default/widgets")
        assert listed["kind"] == "WidgetList"
        if shutil.which("kubectl"):
            process = await asyncio.create_subprocess_exec(
                "kubectl",
                "get",
                "crds",
                "--kubeconfig",
                str(kubeconfig),
                "--cache-dir",
                str(tmp_path / "cache"),
                stdout=asyncio.subprocess.PIPE,
            )
            out, _ = await asyncio.wait_for(process.communicate(), GUARD)
            assert "widgets.example.pyop.dev" in out.decode()
    finally:
        code = await running.stop(signum)
    assert code == 0
    assert not kubeconfig.exists()  # its token and port are dead: removed
    assert not kubeconfig.parent.exists()  # and the folder it made for it


async def test_in_a_project_it_installs_config_crd_bases_and_plays_its_kubernetes_version(tmp_path: Path) -> None:
    runner = CliRunner()
    init = ["init", "--domain", "example.com", "--project-name", "demo", "--kubernetes-version", "1.34"]
    result = runner.invoke(app, [*init, "-C", str(tmp_path)])
    assert result.exit_code == 0, result.stderr
    _write_crd(tmp_path / "config" / "crd" / "bases")
    running = await _start(cwd=tmp_path)
    try:
        banner = await running.ready()
        kubeconfig = tmp_path / "bin" / "test-server.kubeconfig"
        assert banner[0].startswith("pyop test API server (Kubernetes 1.34)")
        assert banner[1] == "CRDs installed: widgets.example.pyop.dev"
        assert f"kubeconfig: {kubeconfig}" in banner
        async with Client(await load_config(kubeconfig)) as client:
            version = await client.transport.request("GET", "/version")
        assert version["minor"] == "34"
    finally:
        assert await running.stop(signal.SIGTERM) == 0
    assert not (tmp_path / "bin").exists()  # the project is as it was


def test_bad_input_is_one_line_and_exit_2_with_nothing_written(tmp_path: Path) -> None:
    runner = CliRunner()
    before = sorted(tmp_path.rglob("*"))
    missing = runner.invoke(app, ["test-server", "--crds", "no-such-folder", "-C", str(tmp_path)])
    assert missing.exit_code == 2
    assert missing.stderr == (
        "Error: --crds no-such-folder: no such file or folder (give a folder of CRD YAML files or one file)\n"
    )
    assert sorted(tmp_path.rglob("*")) == before
    mine = tmp_path / "my-kubeconfig"
    mine.write_text("apiVersion: v1\nkind: Config\ncurrent-context: prod\n")
    refused = runner.invoke(app, ["test-server", "--kubeconfig", str(mine), "-C", str(tmp_path)])
    assert refused.exit_code == 2
    assert refused.stderr.startswith(f"Error: --kubeconfig {mine}: the file exists and is not a test server's")
    assert mine.read_text() == "apiVersion: v1\nkind: Config\ncurrent-context: prod\n"
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "a.yaml").write_text(yaml.safe_dump(WIDGET_CRD))
    (tmp_path / "crds" / "b.yaml").write_text("a: [\n")
    broken = runner.invoke(app, ["test-server", "--crds", "crds", "--kubeconfig", "kc", "-C", str(tmp_path)])
    assert broken.exit_code == 2 and broken.stderr.count("\n") == 1
    assert broken.stderr.startswith(f"Error: --crds: {(tmp_path / 'crds' / 'b.yaml').resolve()}: while parsing")
    invalid = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x"}}
    (tmp_path / "invalid.yaml").write_text(yaml.safe_dump({**invalid, "spec": {"group": "example.com"}}))
    refused = runner.invoke(app, ["test-server", "--crds", "invalid.yaml", "--kubeconfig", "kc", "-C", str(tmp_path)])
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1
    assert 'CustomResourceDefinition.apiextensions.k8s.io "x" is invalid: [spec.names.plural: Required value' in (
        refused.stderr
    )
    assert not (tmp_path / "kc").exists()
    bad_port = runner.invoke(app, ["test-server", "--port", "70000", "-C", str(tmp_path)])
    assert bad_port.exit_code == 2 and bad_port.stderr == (
        "Error: --port 70000: not a TCP port (0 to 65535; 0 picks a free one)\n"
    )
    loopback = runner.invoke(app, ["test-server", "--advertise-address", "127.0.0.1", "-C", str(tmp_path)])
    assert loopback.exit_code == 2 and loopback.stderr == (
        "Error: --advertise-address 127.0.0.1: may not be in the loopback range (127.0.0.0/8, ::1/128) "
        "(give an IP address that is not unspecified, loopback or link-local)\n"
    )
    assert not (tmp_path / "test-server.kubeconfig").exists()


async def test_the_advertise_address_is_what_the_kubernetes_endpoints_hold(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    running = await _start("--advertise-address", "192.0.2.77", "--kubeconfig", str(kubeconfig), cwd=tmp_path)
    try:
        await running.ready()
        async with Client(await load_config(kubeconfig)) as client:
            endpoints = await client.dynamic.get(ENDPOINTS, "kubernetes", "default")
        assert endpoints["subsets"][0]["addresses"] == [{"ip": "192.0.2.77"}]
    finally:
        assert await running.stop(signal.SIGTERM) == 0


async def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        running = await _start("--port", str(port), "--kubeconfig", str(tmp_path / "kc"), cwd=tmp_path)
        code = await asyncio.wait_for(running.process.wait(), GUARD)
        assert running.process.stderr is not None
        stderr = (await running.process.stderr.read()).decode()
    assert code == 2
    assert stderr == f"Error: --port {port}: already in use on 127.0.0.1 (give another, or 0)\n"
    assert not (tmp_path / "kc").exists()


def test_the_generated_makefile_runs_it_after_make_manifests(tmp_path: Path) -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not on PATH")
    init = ["init", "--domain", "example.com", "--project-name", "demo", "-C", str(tmp_path)]
    assert CliRunner().invoke(app, init).exit_code == 0
    dry = subprocess.run(
        [make, "-n", "test-server", "PYOP=pyop"], cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60
    )
    assert dry.stdout.splitlines() == [
        "pyop make manifests",
        "pyop test-server --kubeconfig bin/test-server.kubeconfig",
    ]
    listed = subprocess.run([make, "help"], cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60)
    assert "test-server" in listed.stdout and "KUBECONFIG=bin/test-server.kubeconfig make run" in listed.stdout


async def test_a_scaffolded_manager_reconciles_against_it(tmp_path: Path) -> None:
    """What `make test-server` + `make run` do, end to end: the project's manager (`python -m <package>.main`,
    the command `make run` runs) against the standalone server, reconciling the sample."""
    runner = CliRunner()
    for args in (
        ["init", "--domain", "example.com", "--project-name", "fleet"],
        ["create", "api", "--group", "ship", "--version", "v1", "--kind", "Frigate"],
        ["make", "manifests"],
    ):
        result = runner.invoke(app, [*args, "-C", str(tmp_path)])
        assert result.exit_code == 0, (args, result.stderr)
    running = await _start(cwd=tmp_path)
    manager: asyncio.subprocess.Process | None = None
    try:
        banner = await running.ready()
        assert banner[1] == "CRDs installed: frigates.ship.example.com"
        kubeconfig = tmp_path / "bin" / "test-server.kubeconfig"
        manager = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "fleet.main",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            cwd=tmp_path,
            env={**os.environ, "KUBECONFIG": str(kubeconfig), "ENABLE_WEBHOOKS": "false"},
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        sample = yaml.safe_load((tmp_path / "config" / "samples" / "ship_v1_frigate.yaml").read_text())
        path = "/apis/ship.example.com/v1/namespaces/default/frigates"
        async with Client(await load_config(kubeconfig)) as client:
            await client.transport.request("POST", path, body=sample)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + GUARD
            while True:
                found = await client.transport.request("GET", f"{path}/{sample['metadata']['name']}")
                conditions = {c["type"]: c["status"] for c in (found.get("status") or {}).get("conditions") or []}
                if conditions.get("Available") == "True":
                    break
                assert loop.time() < deadline, f"the manager did not reconcile the sample: {found.get('status')}"
                await asyncio.sleep(0.1)
    finally:
        if manager is not None and manager.returncode is None:
            manager.terminate()
            await asyncio.wait_for(manager.wait(), GUARD)
        assert await running.stop(signal.SIGINT) == 0
