"""Configuration from kubeconfig (files, KUBECONFIG lists, contexts, tokens, certificates, exec plugins) and
from an in-cluster service account, each used for real requests against the test server where it can be."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from client_helpers import Widget, widget

from pyop.client import Client, ConfigError, load_config, load_in_cluster_config
from pyop.testing import TestAPIServer


def kubeconfig(contexts: dict[str, tuple[str | TestAPIServer, dict[str, Any]]], current: str) -> dict[str, Any]:
    """A kubeconfig with one cluster and user per context: {context: (server, user)}; a test server's cluster
    entry is its own (its URL and the CA of its https certificate)."""

    def cluster(server: str | TestAPIServer) -> dict[str, Any]:
        if isinstance(server, str):
            return {"server": server}
        return dict(server.kubeconfig_dict()["clusters"][0]["cluster"])

    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": current,
        "clusters": [{"name": name, "cluster": cluster(server)} for name, (server, _) in contexts.items()],
        "users": [{"name": name, "user": user} for name, (_, user) in contexts.items()],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": name, "namespace": f"ns-{name}"}} for name in contexts
        ],
    }


def write(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(config))
    return path


async def test_kubeconfig_of_the_test_server_works_end_to_end(server: TestAPIServer) -> None:
    config = await load_config(server.kubeconfig_path)
    assert config.server == server.url and config.context == "pyop-test"
    async with Client(config) as client:
        created = await client.create(widget("w1"))
        assert created.metadata.uid


async def test_context_argument_selects_cluster_user_and_namespace(server: TestAPIServer, tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            {"broken": ("http://127.0.0.1:9", {"token": "nope"}), "good": (server, {"token": server.token})},
            current="broken",
        ),
    )
    default = await load_config(path)
    assert default.server == "http://127.0.0.1:9" and default.namespace == "ns-broken"
    chosen = await load_config(path, context="good")
    assert chosen.server == server.url and chosen.namespace == "ns-good"
    async with Client(chosen) as client:
        assert (await client.list(Widget, "default")).items == []
    with pytest.raises(ConfigError):
        await load_config(path, context="missing")


async def test_kubeconfig_env_list_is_merged(
    server: TestAPIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write(tmp_path / "a", kubeconfig({"a": ("http://127.0.0.1:9", {"token": "x"})}, current="b"))
    second = write(tmp_path / "b", kubeconfig({"b": (server, {"token": server.token})}, current="b"))
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{first}:{second}")
    config = await load_config()
    assert config.server == server.url  # current-context "b" is defined in the second file
    assert (await load_config(context="a")).server == "http://127.0.0.1:9"
    async with Client(config) as client:
        await client.create(widget("w1"))


async def test_kubeconfig_argument_wins_over_env(
    server: TestAPIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nothing-here"))
    config = await load_config(server.kubeconfig_dict())
    assert config.server == server.url


async def test_exec_credential_plugin_supplies_the_token(server: TestAPIServer, tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json, os, sys\n"
        f"open({str(calls)!r}, 'a').write(os.environ.get('KUBERNETES_EXEC_INFO', '') + '\\n')\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',\n"
        f"  'status': {{'token': {server.token!r}, 'expirationTimestamp': '2999-01-01T00:00:00Z'}}}}))\n"
    )
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "interactiveMode": "Never",
        }
    }
    config = await load_config(kubeconfig({"exec": (server, user)}, current="exec"))
    async with Client(config) as client:
        await client.create(widget("w1"))
        assert (await client.get(Widget, "w1", "default")).metadata.name == "w1"
    lines = calls.read_text().splitlines()
    assert json.loads(lines[0])["kind"] == "ExecCredential"
    assert len(lines) == 1  # the unexpired credential was reused for every request


@pytest.mark.parametrize("expiry", ["", "2000-01-01T00:00:00Z"])
async def test_exec_plugin_runs_again_only_when_needed(server: TestAPIServer, tmp_path: Path, expiry: str) -> None:
    """Without an expiry the credential is kept (until a 401); with a past expiry it is renewed per request."""
    counter = tmp_path / "count"
    plugin = tmp_path / "plugin.py"
    status = f"{{'token': {server.token!r}" + (f", 'expirationTimestamp': {expiry!r}}}" if expiry else "}")
    plugin.write_text(
        "import json, pathlib\n"
        f"p = pathlib.Path({str(counter)!r})\n"
        "p.write_text(str(int(p.read_text()) + 1 if p.exists() else 1))\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',\n"
        f"  'status': {status}}}))\n"
    )
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable, "args": [str(plugin)]}}
    config = await load_config(kubeconfig({"exec": (server, user)}, current="exec"))
    async with Client(config) as client:
        for _ in range(3):
            await client.list(Widget, "default")
    assert int(counter.read_text()) == (1 if not expiry else 4)


async def test_exec_plugin_is_rerun_after_401(server: TestAPIServer, tmp_path: Path) -> None:
    """An exec credential revoked before its expiry: the 401 makes the client run the plugin again."""
    counter = tmp_path / "count"
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json, pathlib\n"
        f"p = pathlib.Path({str(counter)!r})\n"
        "n = int(p.read_text()) if p.exists() else 0\n"
        "p.write_text(str(n + 1))\n"
        f"token = 'stale' if n == 0 else {server.token!r}\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',\n"
        "  'status': {'token': token, 'expirationTimestamp': '2999-01-01T00:00:00Z'}}))\n"
    )
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable, "args": [str(plugin)]}}
    config = await load_config(kubeconfig({"exec": (server, user)}, current="exec"))
    async with Client(config) as client:
        assert (await client.list(Widget, "default")).items == []
    assert counter.read_text() == "2"


async def test_failing_exec_plugin_is_a_config_error(tmp_path: Path) -> None:
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "false"}}
    with pytest.raises(ConfigError):
        await load_config(kubeconfig({"x": ("https://127.0.0.1:9", user)}, current="x"))


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
async def test_client_certificate_data_becomes_a_tls_context(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=pyop-test"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    import base64

    def b64(path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode()

    config_dict = {
        "apiVersion": "v1",
        "current-context": "tls",
        "clusters": [
            {"name": "tls", "cluster": {"server": "https://127.0.0.1:6443", "certificate-authority-data": b64(cert)}}
        ],
        "users": [{"name": "tls", "user": {"client-certificate-data": b64(cert), "client-key-data": b64(key)}}],
        "contexts": [{"name": "tls", "context": {"cluster": "tls", "user": "tls"}}],
    }
    config = await load_config(config_dict)
    assert config.cert_file and config.key_file and config.ca_file
    assert Path(config.cert_file).read_bytes() == cert.read_bytes()
    context = config.ssl_context()
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED
    assert context.get_ca_certs()[0]["subject"] == ((("commonName", "pyop-test"),),)


def test_in_cluster_service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\nnot checked here\n-----END CERTIFICATE-----\n")
    (tmp_path / "namespace").write_text("operators")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    config = load_in_cluster_config(tmp_path)
    assert config.server == "https://10.0.0.1:443"
    assert config.namespace == "operators" and config.ca_file == str(tmp_path / "ca.crt")


async def test_in_cluster_token_is_sent_and_chosen_without_kubeconfig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_text("x")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    config = await load_config(service_account_dir=tmp_path)
    assert config.server == "https://[fd00::1]:6443"
    assert config.auth is not None and await config.auth.authorization() == "Bearer sa-token"


async def test_nothing_to_load_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ConfigError):
        await load_config(service_account_dir=tmp_path)
