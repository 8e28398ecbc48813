"""The real kubectl's `exec` and `attach` against the test server (issue 12): kubectl 1.30+ speaks
v5.channel.k8s.io over a websocket, exits with the command's exit code and prints kube's texts for the refusals.

The container's behaviour is the test's (`TestAPIServer.pod_streams`): a tiny shell from test_pod_exec.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pyop.testing import TestAPIServer
from pyop.testing.builtins.pod_streaming import ExecSession
from pyop.testing.kubeconfig import kubeconfig_dict, write_kubeconfig
from testing_server.helpers import Api
from testing_server.kubectl.helpers import GUARD, Kubectl, Result
from testing_server.test_pod_exec import make_pod, shell

PODS = "/api/v1/namespaces/default/pods"


async def run(kubectl: Kubectl, *args: str, stdin: bytes | None = None, kubeconfig: Path | None = None) -> Result:
    """kubectl with its flags before `--` (the helper appends --cache-dir, which would become the command's)."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(kubectl.home),
        "KUBECONFIG": str(kubeconfig or kubectl.server.kubeconfig_path),
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
    await api.create_ok("/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "robot"}})
    token = server.token_for_service_account("default", "robot")
    ca_data = server.certificate.ca_data if server.certificate else None
    robot = write_kubeconfig(tmp_path / "robot.kubeconfig", kubeconfig_dict(server.url, token, "default", ca_data))
    rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    role = {"metadata": {"name": "exec"}, "rules": rules}
    await api.create_ok("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", role)
    binding = {
        "metadata": {"name": "exec"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "exec"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}],
    }
    await api.create_ok("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", binding)
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
    role_path = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/exec"
    _, current = await api.get(role_path)
    assert (await api.put(role_path, {**current, "rules": rules}))[0] == 200
    refused = await run(kubectl, "exec", "web-1", "--", "echo", "hi", kubeconfig=robot)
    assert (refused.returncode, refused.stderr) == (1, forbidden)
    rules[-1] = {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["get", "create"]}
    _, current = await api.get(role_path)
    assert (await api.put(role_path, {**current, "rules": rules}))[0] == 200
    allowed = await run(kubectl, "exec", "web-1", "--", "echo", "hi", kubeconfig=robot)
    assert (allowed.returncode, allowed.stdout) == (0, "hi\n"), allowed.stderr
