"""The real kubectl's `exec` and `attach` against the test server (issue 12): kubectl 1.30+ speaks
v5.channel.k8s.io over a websocket, exits with the command's exit code and prints kube's texts for the refusals.

The container's behaviour is the test's (`TestAPIServer.pod_streams`): a tiny shell from test_pod_exec.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import pty
import struct
import termios
from pathlib import Path
from typing import Any

import pytest

from pyop.testing import TestAPIServer
from pyop.testing.builtins.pod_streaming import ExecSession
from pyop.testing.kubeconfig import kubeconfig_dict, write_kubeconfig
from testing_server.helpers import Api
from testing_server.kubectl.helpers import GUARD, Kubectl, Result
from testing_server.test_pod_exec import echo, make_pod, shell

PODS = "/api/v1/namespaces/default/pods"


async def run(
    kubectl: Kubectl,
    *args: str,
    stdin: bytes | None = None,
    kubeconfig: Path | None = None,
    env: dict[str, str] | None = None,
) -> Result:
    """kubectl with its flags before `--` (the helper appends --cache-dir, which would become the command's)."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(kubectl.home),
        "KUBECONFIG": str(kubeconfig or kubectl.server.kubeconfig_path),
        **(env or {}),
    }
    process = await asyncio.create_subprocess_exec(
        kubectl.binary,
        "--cache-dir",
        str(kubectl.home / "cache"),
        *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), GUARD)
    return Result(process.returncode or 0, out.decode(), err.decode())


async def test_kubectl_exec_prints_stdout(server: TestAPIServer, api: Api, kubectl: Kubectl) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    result = await run(kubectl, "exec", "web-1", "--", "echo", "hello", "from", "the", "pod")
    assert (result.returncode, result.stdout, result.stderr) == (0, "hello from the pod\n", "")


async def test_kubectl_exec_exits_with_the_commands_code(server: TestAPIServer, api: Api, kubectl: Kubectl) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    result = await run(kubectl, "exec", "web-1", "--", "fail", "42")
    assert result.returncode == 42
    assert result.stdout == ""
    assert result.stderr == "failing with 42\ncommand terminated with exit code 42\n"


async def test_kubectl_exec_i_sends_stdin_to_its_end(server: TestAPIServer, api: Api, kubectl: Kubectl) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    result = await run(kubectl, "exec", "-i", "web-1", "--", "cat", stdin=b"first\nsecond\n")
    assert (result.returncode, result.stdout) == (0, "first\nsecond\n")


async def test_kubectl_exec_picks_the_container(server: TestAPIServer, api: Api, kubectl: Kubectl) -> None:
    async def which(session: ExecSession) -> int:
        session.stdout.write(f"{session.container}: {' '.join(session.command)}\n")
        return 0

    await make_pod(api, "web-1", "app", "sidecar")
    server.pod_streams.on_exec("default", "web-1", which, container="sidecar")
    result = await run(kubectl, "exec", "web-1", "-c", "sidecar", "--", "id", "-u")
    assert result.stdout == "sidecar: id -u\n"
    result = await run(kubectl, "exec", "web-1", "-c", "db", "--", "id")
    assert result.returncode == 1
    assert result.stderr == "Error from server (BadRequest): container db is not valid for pod web-1\n"


async def test_kubectl_exec_without_a_handler_or_a_node(server: TestAPIServer, api: Api, kubectl: Kubectl) -> None:
    await make_pod(api, "web-1", "app")
    result = await run(kubectl, "exec", "web-1", "--", "ls")
    assert result.returncode == 1
    assert 'unable to upgrade connection: container not found ("app")' in result.stderr
    await make_pod(api, "pending", "app", node=None)
    result = await run(kubectl, "exec", "pending", "--", "ls")
    assert result.returncode == 1
    assert result.stderr == "Error from server (BadRequest): pod pending does not have a host assigned\n"


async def test_kubectl_attach_reaches_the_main_process(server: TestAPIServer, api: Api, kubectl: Kubectl) -> None:
    async def main_process(session: ExecSession) -> None:
        assert session.stdin is not None
        data = await session.stdin.read()
        session.stdout.write(b"main process read " + data)

    await make_pod(api, "web-1", "app")
    server.pod_streams.on_attach("default", "web-1", "app", main_process)
    result = await run(kubectl, "attach", "-i", "web-1", stdin=b"input\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "main process read input\n"


async def test_kubectl_exec_needs_create_on_pods_exec(
    server: TestAPIServer, api: Api, kubectl: Kubectl, tmp_path: Path
) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    robot = await _robot(server, api, tmp_path, rules)
    role_path = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/exec"
    forbidden = (
        'Error from server (Forbidden): pods "web-1" is forbidden: User "system:serviceaccount:default:robot" '
        'cannot create resource "pods/exec" in API group "" in the namespace "default"\n'
    )
    server.reset_requests()
    refused = await run(kubectl, "exec", "web-1", "--", "echo", "hi", kubeconfig=robot)
    assert (refused.returncode, refused.stderr) == (1, forbidden)
    # kubectl tried the websocket (a GET, refused as `get`), then fell back to SPDY (a POST, refused as `create`).
    attempts = [(r.method, r.verb, r.status) for r in server.requests if r.subresource == "exec"]
    assert attempts == [("GET", "get", 403), ("POST", "create", 403)]
    # `get` alone passes the first check of the websocket GET, not the compound `create` one (1.35+).
    rules.append({"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["get"]})
    _, current = await api.get(role_path)
    assert (await api.put(role_path, {**current, "rules": rules}))[0] == 200
    refused = await run(kubectl, "exec", "web-1", "--", "echo", "hi", kubeconfig=robot)
    assert (refused.returncode, refused.stderr) == (1, forbidden)
    rules[-1] = {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["get", "create"]}
    _, current = await api.get(role_path)
    assert (await api.put(role_path, {**current, "rules": rules}))[0] == 200
    allowed = await run(kubectl, "exec", "web-1", "--", "echo", "hi", kubeconfig=robot)
    assert (allowed.returncode, allowed.stdout) == (0, "hi\n"), allowed.stderr


async def _robot(server: TestAPIServer, api: Api, tmp_path: Path, rules: list[dict[str, Any]]) -> Path:
    """A kubeconfig of ServiceAccount default/robot, bound to a Role `exec` with ``rules``."""
    await api.create_ok("/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "robot"}})
    token = server.token_for_service_account("default", "robot")
    ca_data = server.certificate.ca_data if server.certificate else None
    robot = write_kubeconfig(tmp_path / "robot.kubeconfig", kubeconfig_dict(server.url, token, "default", ca_data))
    await api.create_ok(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {"metadata": {"name": "exec"}, "rules": rules}
    )
    binding = {
        "metadata": {"name": "exec"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "exec"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}],
    }
    await api.create_ok("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", binding)
    return robot


# --- SPDY: kubectl's port-forward, and its exec fallback -------------------------------------------------------------


async def _running_pod(server: TestAPIServer, api: Api, name: str) -> None:
    """kubectl port-forward refuses a pod that is not Running (a client-side check)."""
    await make_pod(api, name, "app")
    _, current = await api.get(f"{PODS}/{name}")
    assert (await api.put(f"{PODS}/{name}/status", {**current, "status": {"phase": "Running"}}))[0] == 200


async def _port_forward(kubectl: Kubectl, *args: str, env: dict[str, str] | None = None) -> tuple[Any, int]:
    """A running `kubectl port-forward <pod> :<port>` and the local port it chose."""
    process = await asyncio.create_subprocess_exec(
        kubectl.binary,
        "--cache-dir",
        str(kubectl.home / "cache"),
        "port-forward",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(kubectl.home),
            "KUBECONFIG": str(kubectl.server.kubeconfig_path),
            **(env or {}),
        },
    )
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), GUARD)).decode()
    if not line.startswith("Forwarding from 127.0.0.1:"):
        process.kill()
        _, err = await process.communicate()
        raise AssertionError(f"kubectl port-forward did not start: {line!r} {err.decode()}")
    return process, int(line.split("127.0.0.1:", 1)[1].split(" ", 1)[0])


async def _exchange(port: int, payload: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(payload)
        await writer.drain()
        return await asyncio.wait_for(reader.readexactly(len(payload)), GUARD)
    finally:
        writer.close()


async def _stop(process: Any) -> str:
    process.terminate()
    _, err = await asyncio.wait_for(process.communicate(), GUARD)
    return str(err.decode())


@pytest.mark.parametrize(
    ("transport", "env"),
    [("SPDY tunnelled in a websocket", {}), ("SPDY upgraded in place", {"KUBECTL_PORT_FORWARD_WEBSOCKETS": "false"})],
)
async def test_kubectl_port_forward_reaches_the_port_handler(
    server: TestAPIServer, api: Api, kubectl: Kubectl, transport: str, env: dict[str, str]
) -> None:
    await _running_pod(server, api, "web-1")
    server.pod_streams.on_port("default", "web-1", 8080, echo)
    server.reset_requests()
    process, local = await _port_forward(kubectl, "web-1", ":8080", env=env)
    try:
        assert await _exchange(local, b"first connection") == b"FIRST CONNECTION"
        assert await _exchange(local, b"and a second one") == b"AND A SECOND ONE"
    finally:
        await _stop(process)
    methods = [(r.method, r.status) for r in server.requests if r.subresource == "portforward"]
    assert methods == ([("GET", 101)] if not env else [("POST", 101)]), transport


async def test_kubectl_port_forward_to_a_real_tcp_server(server: TestAPIServer, api: Api, kubectl: Kubectl) -> None:
    async def database(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"db:" + await reader.readexactly(5))
        await writer.drain()
        writer.close()

    tcp = await asyncio.start_server(database, "127.0.0.1", 0)
    try:
        await _running_pod(server, api, "db-0")
        server.pod_streams.forward_port("default", "db-0", 5432, tcp.sockets[0].getsockname()[1])
        process, local = await _port_forward(kubectl, "db-0", ":5432")
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", local)
            writer.write(b"query")
            assert await asyncio.wait_for(reader.read(), GUARD) == b"db:query"
            writer.close()
        finally:
            await _stop(process)
    finally:
        tcp.close()
        await tcp.wait_closed()


async def test_kubectl_port_forward_to_a_port_nothing_listens_on(
    server: TestAPIServer, api: Api, kubectl: Kubectl
) -> None:
    await _running_pod(server, api, "web-1")
    process, local = await _port_forward(kubectl, "web-1", ":9090")
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", local)
        assert await asyncio.wait_for(reader.read(), GUARD) == b""  # kubectl closes the connection
        writer.close()
    finally:
        err = await _stop(process)
    _, pod = await api.get(f"{PODS}/web-1")
    expected = f"error forwarding port 9090 to pod {pod['metadata']['uid']}, uid : failed to connect to localhost:9090"
    assert expected in err


async def test_kubectl_exec_over_spdy(server: TestAPIServer, api: Api, kubectl: Kubectl) -> None:
    """kubectl's SPDY remote command client (its fallback, forced here) against the same handler."""
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    spdy = {"KUBECTL_REMOTE_COMMAND_WEBSOCKETS": "false"}
    server.reset_requests()
    result = await run(kubectl, "exec", "-i", "web-1", "--", "cat", stdin=b"over spdy\n", env=spdy)
    assert (result.returncode, result.stdout) == (0, "over spdy\n"), result.stderr
    result = await run(kubectl, "exec", "web-1", "--", "fail", "3", env=spdy)
    assert (result.returncode, result.stderr) == (3, "failing with 3\ncommand terminated with exit code 3\n")
    assert {(r.method, r.status) for r in server.requests if r.subresource == "exec"} == {("POST", 101)}


async def test_create_without_get_on_pods_exec_runs_over_spdy(
    server: TestAPIServer, api: Api, kubectl: Kubectl, tmp_path: Path
) -> None:
    """The websocket GET is refused (`get`), kubectl falls back to SPDY, whose POST is a `create`: allowed."""
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    rules = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},  # kubectl reads the pod first
        {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]},
    ]
    robot = await _robot(server, api, tmp_path, rules)
    server.reset_requests()
    result = await run(kubectl, "exec", "web-1", "--", "echo", "fell", "back", kubeconfig=robot)
    assert (result.returncode, result.stdout) == (0, "fell back\n"), result.stderr
    attempts = [(r.method, r.verb, r.status) for r in server.requests if r.subresource == "exec"]
    assert attempts == [("GET", "get", 403), ("POST", "create", 101)]


async def test_kubectl_exec_it_sends_the_terminal_size(server: TestAPIServer, api: Api, kubectl: Kubectl) -> None:
    """Under a terminal (a pty sized 132x43), `kubectl exec -it` asks for a tty and sends its size on channel 4."""
    await make_pod(api, "web-1", "app")
    seen: list[bool] = []

    async def size(session: ExecSession) -> int:
        seen.append(session.tty)
        return await shell(session)

    server.pod_streams.on_exec("default", "web-1", size)
    primary, secondary = pty.openpty()
    try:
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 43, 132, 0, 0))
        process = await asyncio.create_subprocess_exec(
            kubectl.binary,
            "--cache-dir",
            str(kubectl.home / "cache"),
            "exec",
            "-it",
            "web-1",
            "--",
            "size",
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            env={
                "PATH": os.environ.get("PATH", ""),
                "HOME": str(kubectl.home),
                "KUBECONFIG": str(server.kubeconfig_path),
            },
        )
        os.close(secondary)
        secondary = -1
        assert await asyncio.wait_for(process.wait(), GUARD) == 0
        output = b""
        with contextlib.suppress(OSError):  # EIO once everything the terminal held is read
            while chunk := os.read(primary, 4096):
                output += chunk
    finally:
        os.close(primary)
        if secondary >= 0:
            os.close(secondary)
    assert output == b"132x43\n"
    assert seen == [True]
