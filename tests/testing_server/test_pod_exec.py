"""Pods' `exec`, `attach` and `portforward` (issue 12), driven by the official `kubernetes` client's `stream` and
`portforward` (its v5/v4.channel.k8s.io websocket code) and by a raw websocket client for the framing itself.

The test says what the container does (`TestAPIServer.pod_streams`); the checks before the upgrade and their texts
are kube-apiserver's (pkg/registry/core/pod/strategy.go streamLocation), the error channel's Status is the
kubelet's (remotecommand.ServeExec), the framing wsstream's (k8s.io/apimachinery/pkg/util/httpstream/wsstream).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable
from typing import Any, TypeVar

import aiohttp
import pytest

from pyop.testing import TestAPIServer
from pyop.testing.builtins.pod_streaming import ExecSession, PortWriter
from testing_server.helpers import Api, connector, official_client

kubernetes = pytest.importorskip("kubernetes", reason="the official kubernetes client drives these tests")
from kubernetes.stream import portforward, stream  # noqa: E402

client = kubernetes.client
ApiException = kubernetes.client.exceptions.ApiException
T = TypeVar("T")
PODS = "/api/v1/namespaces/default/pods"


async def call(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await asyncio.to_thread(function, *args, **kwargs)


async def make_pod(api: Api, name: str, *containers: str, node: str | None = "node-a") -> None:
    body = {"metadata": {"name": name}, "spec": {"containers": [{"name": c, "image": "x:1"} for c in containers]}}
    await api.create_ok(PODS, body)
    if node:
        binding = {"metadata": {"name": name}, "target": {"kind": "Node", "name": node}}
        assert (await api.post(f"{PODS}/{name}/binding", binding))[0] == 201


async def shell(session: ExecSession) -> int:
    """A tiny container: `echo ARGS`, `fail N` (stderr, exit N), `cat` (stdin to stdout), `size`."""
    match session.command:
        case ["echo", *words]:
            session.stdout.write(" ".join(words) + "\n")
            return 0
        case ["fail", code]:
            session.stderr.write(f"failing with {code}\n")
            return int(code)
        case ["cat"]:
            assert session.stdin is not None
            while data := await session.stdin.read(4096):
                session.stdout.write(data)
            return 0
        case ["size"]:
            size = await session.resizes.get()
            session.stdout.write(f"{size.width}x{size.height}\n")
            return 0
    session.stderr.write(f"{session.command[0]}: not found\n")
    return 127


async def echo(reader: asyncio.StreamReader, writer: PortWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data.upper())
        await writer.drain()
    writer.close()


# --- the official client -------------------------------------------------------------------------------------------


async def test_stream_runs_the_command_and_returns_its_output(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    core = client.CoreV1Api(official_client(server))
    output = await call(
        stream, core.connect_get_namespaced_pod_exec, "web-1", "default", command=["echo", "hello", "world"],
        stderr=True, stdin=False, stdout=True, tty=False,
    )  # fmt: skip
    assert output == "hello world\n"


async def test_stream_reports_stderr_and_the_exit_code(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    core = client.CoreV1Api(official_client(server))
    response = await call(
        stream, core.connect_get_namespaced_pod_exec, "web-1", "default", command=["fail", "3"],
        stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False,
    )  # fmt: skip
    await call(response.run_forever, timeout=10)
    assert response.read_stderr() == "failing with 3\n"
    assert response.returncode == 3


async def test_stream_with_stdin_closes_it_with_the_v5_signal(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    core = client.CoreV1Api(official_client(server))
    response = await call(
        stream, core.connect_get_namespaced_pod_exec, "web-1", "default", command=["cat"],
        stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False,
    )  # fmt: skip
    assert response.subprotocol == "v5.channel.k8s.io"
    await call(response.write_stdin, "line one\nline two\n")
    await call(response.close_channel, 0)
    await call(response.run_forever, timeout=10)
    assert response.read_stdout() == "line one\nline two\n"
    assert response.returncode == 0


async def test_portforward_reaches_the_port_handler(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_port("default", "web-1", 8080, echo)
    core = client.CoreV1Api(official_client(server))
    forward = await call(portforward, core.connect_get_namespaced_pod_portforward, "web-1", "default", ports="8080")
    sock = forward.socket(8080)
    sock.settimeout(10)

    def exchange() -> bytes:
        sock.sendall(b"ping over the tunnel")
        received = b""
        while len(received) < len(b"ping over the tunnel"):
            received += sock.recv(1024)
        sock.close()
        return received

    assert await call(exchange) == b"PING OVER THE TUNNEL"
    assert forward.error(8080) is None


async def test_portforward_to_a_port_nothing_listens_on_reports_the_kubelets_error(
    server: TestAPIServer, api: Api
) -> None:
    await make_pod(api, "web-1", "app")
    core = client.CoreV1Api(official_client(server))
    forward = await call(portforward, core.connect_get_namespaced_pod_portforward, "web-1", "default", ports="9090")
    sock = forward.socket(9090)
    sock.settimeout(10)
    assert await call(sock.recv, 1024) == b""  # the client closes the port once its error channel speaks
    error = forward.error(9090)
    assert error is not None and error.startswith("error forwarding port 9090 to pod ")
    assert "connection refused" in error


async def test_forward_port_to_a_real_tcp_server(server: TestAPIServer, api: Api) -> None:
    async def upstream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.readline()
        writer.write(b"real server got " + data)
        await writer.drain()
        writer.close()

    tcp = await asyncio.start_server(upstream, "127.0.0.1", 0)
    target = tcp.sockets[0].getsockname()[1]
    try:
        await make_pod(api, "web-1", "app")
        server.pod_streams.forward_port("default", "web-1", 5432, target)
        core = client.CoreV1Api(official_client(server))
        forward = await call(portforward, core.connect_get_namespaced_pod_portforward, "web-1", "default", ports="5432")
        sock = forward.socket(5432)
        sock.settimeout(10)

        def exchange() -> bytes:
            sock.sendall(b"hello\n")
            received = b""
            while chunk := sock.recv(1024):
                received += chunk
            return received

        assert await call(exchange) == b"real server got hello\n"
    finally:
        tcp.close()
        await tcp.wait_closed()


# --- the checks before the upgrade ---------------------------------------------------------------------------------


async def _exec_refusal(server: TestAPIServer, name: str, **kwargs: Any) -> tuple[int, str]:
    core = client.CoreV1Api(official_client(server))
    arguments: dict[str, Any] = {"command": ["echo"], "stdout": True, "stderr": True, "stdin": False, "tty": False}
    try:
        await call(stream, core.connect_get_namespaced_pod_exec, name, "default", **{**arguments, **kwargs})
    except ApiException as error:
        return error.status, str(error.reason)
    raise AssertionError("the exec succeeded")


async def ws_get(server: TestAPIServer, path: str, protocols: tuple[str, ...] = ("v4.channel.k8s.io",)) -> Any:
    """A raw websocket request: 101, or the HTTP status when the server does not upgrade."""
    headers = {"Authorization": f"Bearer {server.token}"}
    async with aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session:
        try:
            ws = await session.ws_connect(path, protocols=protocols)
        except aiohttp.WSServerHandshakeError as error:
            return error.status, error.message
        await ws.close()
        return 101, ""


async def test_an_unscheduled_pod_has_no_host_to_exec_in(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app", node=None)
    server.pod_streams.on_exec("default", "web-1", shell)
    status, body = await api.post(f"{PODS}/web-1/exec?command=ls&stdout=true", {})
    assert (status, body["reason"], body["message"]) == (400, "BadRequest", "pod web-1 does not have a host assigned")


async def test_container_checks_are_kube_apiservers(api: Api) -> None:
    await make_pod(api, "web-1", "app", "sidecar")
    status, body = await api.post(f"{PODS}/web-1/exec?command=ls&stdout=true&container=db", {})
    assert (status, body["message"]) == (400, "container db is not valid for pod web-1")
    status, body = await api.post(f"{PODS}/web-1/exec?command=ls&stdout=true", {})
    assert (status, body["message"]) == (
        400,
        "a container name must be specified for pod web-1, choose one of: [app sidecar]",
    )
    status, body = await api.post(f"{PODS}/nope/exec?command=ls&stdout=true", {})
    assert (status, body["message"]) == (404, 'pods "nope" not found')


async def test_without_a_handler_the_kubelet_finds_no_container(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    assert (await ws_get(server, f"{PODS}/web-1/exec?command=ls&stdout=true"))[0] == 500
    headers = {"Connection": "Upgrade", "Upgrade": "websocket"}
    async with api.session.get(f"{PODS}/web-1/exec?command=ls&stdout=true", headers=headers) as response:
        assert (response.status, await response.text()) == (500, 'container not found ("app")')


async def test_a_request_that_is_no_upgrade_is_refused_after_the_checks(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    status, body = await api.post(f"{PODS}/web-1/exec?command=ls&stdout=true", {})
    assert (status, body["message"]) == (400, "unable to upgrade: missing upgrade headers in request")
    status, body = await api.post(f"{PODS}/web-1/exec?command=ls", {})
    assert (status, body["message"]) == (400, "you must specify at least 1 of stdin, stdout, stderr")


async def test_discovery_lists_the_streaming_subresources(api: Api) -> None:
    _, resources = await api.get("/api/v1")
    by_name = {entry["name"]: entry for entry in resources["resources"]}
    for name, kind in (
        ("pods/exec", "PodExecOptions"),
        ("pods/attach", "PodAttachOptions"),
        ("pods/portforward", "PodPortForwardOptions"),
    ):
        assert (by_name[name]["kind"], sorted(by_name[name]["verbs"])) == (kind, ["create", "get"])


# --- the framing, byte by byte -------------------------------------------------------------------------------------


async def _frames(ws: aiohttp.ClientWebSocketResponse) -> list[bytes]:
    frames = []
    async for message in ws:
        if message.type == aiohttp.WSMsgType.BINARY:
            frames.append(message.data)
    return frames


async def test_v4_frames_and_the_status_of_a_failed_command(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    headers = {"Authorization": f"Bearer {server.token}"}
    path = f"{PODS}/web-1/exec?command=fail&command=7&stdout=true&stderr=true"
    async with (
        aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session,
        session.ws_connect(path, protocols=("v4.channel.k8s.io",)) as ws,
    ):
        assert ws.protocol == "v4.channel.k8s.io"
        frames = await _frames(ws)
    assert frames[0] == b"\x01"  # the empty message on the lowest writable channel: the streams are open
    assert frames[1] == b"\x02failing with 7\n"
    assert frames[2][0] == 3
    assert json.loads(frames[2][1:]) == {
        "metadata": {},
        "status": "Failure",
        "message": "command terminated with non-zero exit code: error executing command [fail 7], exit code 7",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": "7"}]},
    }


async def test_pre_v4_protocols_carry_the_error_as_text(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    headers = {"Authorization": f"Bearer {server.token}"}
    async with aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session:
        path = f"{PODS}/web-1/exec?command=fail&command=2&stdout=true&stderr=true"
        async with session.ws_connect(path, protocols=("channel.k8s.io",)) as ws:
            failed = await _frames(ws)
        async with session.ws_connect(f"{PODS}/web-1/exec?command=echo&command=ok&stdout=true") as ws:
            assert ws.protocol is None  # no subprotocol at all: channel.k8s.io's framing
            succeeded = await _frames(ws)
    assert failed == [
        b"\x01",
        b"\x02failing with 2\n",
        b"\x03command terminated with non-zero exit code: error executing command [fail 2], exit code 2",
    ]
    assert succeeded == [b"\x01", b"\x01ok\n"]  # nothing on the error channel for a success


async def test_base64_protocol_and_tty_resize(server: TestAPIServer, api: Api) -> None:
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    headers = {"Authorization": f"Bearer {server.token}"}
    path = f"{PODS}/web-1/exec?command=size&stdout=true&stderr=true&stdin=true&tty=true"
    async with (
        aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector(server)) as session,
        session.ws_connect(path, protocols=("v4.base64.channel.k8s.io",)) as ws,
    ):
        await ws.send_str("4" + base64.b64encode(b'{"Width":132,"Height":43}').decode())
        texts = [message.data async for message in ws if message.type == aiohttp.WSMsgType.TEXT]
    assert texts[0] == "1"
    assert texts[1] == "1" + base64.b64encode(b"132x43\n").decode()
    assert json.loads(base64.b64decode(texts[2][1:])) == {"metadata": {}, "status": "Success"}


async def test_a_handler_that_raises_is_an_internal_error(server: TestAPIServer, api: Api) -> None:
    async def broken(session: ExecSession) -> int:
        raise RuntimeError("the runtime said no")

    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", broken)
    core = client.CoreV1Api(official_client(server))
    response = await call(
        stream, core.connect_get_namespaced_pod_exec, "web-1", "default", command=["x"],
        stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False,
    )  # fmt: skip
    await call(response.run_forever, timeout=10)
    status = json.loads(response.read_channel(3))
    assert status["reason"] == "InternalError"
    assert status["message"] == ("Internal error occurred: error executing command in container: the runtime said no")


async def test_attach_runs_the_containers_handler(server: TestAPIServer, api: Api) -> None:
    async def main_process(session: ExecSession) -> None:
        assert session.stdin is not None
        line = await session.stdin.readline()
        session.stdout.write(b"main got " + line)

    await make_pod(api, "web-1", "app", "sidecar")
    server.pod_streams.on_attach("default", "web-1", "sidecar", main_process)
    core = client.CoreV1Api(official_client(server))
    response = await call(
        stream, core.connect_get_namespaced_pod_attach, "web-1", "default", container="sidecar",
        stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False,
    )  # fmt: skip
    await call(response.write_stdin, "hi\n")
    await call(response.run_forever, timeout=10)
    assert response.read_stdout() == "main got hi\n"
    assert response.returncode == 0
    headers = {"Connection": "Upgrade", "Upgrade": "websocket"}
    async with api.session.get(f"{PODS}/web-1/attach?container=app&stdout=true", headers=headers) as answer:
        assert (answer.status, await answer.text()) == (500, 'container not found ("app")')


@pytest.mark.parametrize(("kubernetes_version", "upgraded"), [("1.34", True), ("1.35", False)])
async def test_a_websocket_upgrade_needs_create_from_1_35(server: TestAPIServer, api: Api, upgraded: bool) -> None:
    """AuthorizePodWebsocketUpgradeCreatePermission (beta, on, from 1.35): `get` on pods/exec no longer suffices."""
    await make_pod(api, "web-1", "app")
    server.pod_streams.on_exec("default", "web-1", shell)
    server.add_user("alice-token", "alice")
    role = {"metadata": {"name": "exec"}, "rules": [{"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["get"]}]}
    await api.create_ok("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", role)
    binding = {
        "metadata": {"name": "exec"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "exec"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
    }
    await api.create_ok("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", binding)
    headers = {"Authorization": "Bearer alice-token", "Connection": "Upgrade", "Upgrade": "websocket"}
    headers |= {"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    headers["Sec-WebSocket-Protocol"] = "v4.channel.k8s.io"
    async with api.session.get(f"{PODS}/web-1/exec?command=echo&stdout=true", headers=headers) as response:
        if upgraded:
            assert response.status == 101
        else:
            assert response.status == 403
            assert (await response.json())["message"] == (
                'pods "web-1" is forbidden: User "alice" cannot create resource "pods/exec" in API group "" '
                'in the namespace "default"'
            )


async def test_portforward_of_two_ports_uses_two_channels_each(server: TestAPIServer, api: Api) -> None:
    async def banner(reader: asyncio.StreamReader, writer: PortWriter) -> None:
        writer.write(b"port 9090 here")
        await writer.drain()

    await make_pod(api, "web-1", "app")
    server.pod_streams.on_port("default", "web-1", 8080, echo)
    server.pod_streams.on_port("default", "web-1", 9090, banner)
    core = client.CoreV1Api(official_client(server))
    forward = await call(
        portforward, core.connect_get_namespaced_pod_portforward, "web-1", "default", ports="8080,9090"
    )
    first, second = forward.socket(8080), forward.socket(9090)
    first.settimeout(10)
    second.settimeout(10)

    def exchange() -> tuple[bytes, bytes]:
        first.sendall(b"abc")
        echoed = first.recv(1024)
        return echoed, second.recv(1024)

    assert await call(exchange) == (b"ABC", b"port 9090 here")
    first.close()
    second.close()
