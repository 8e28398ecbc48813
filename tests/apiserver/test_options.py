"""Options bound to k8s.io/apiserver's flag names, their one-line errors, and `run`: exit 2 on bad input with
nothing started, serving until SIGTERM with a graceful shutdown."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import aiohttp
import pytest

from apiserver.helpers import wardle_group
from pyop.apiserver import (
    AggregatedServer,
    APIGroupVersion,
    FlagError,
    OptionsError,
    RecommendedOptions,
    parse_flags,
    run,
)
from pyop.apiserver.server.options import check
from pyop.testing import TestAPIServer
from pyop.testing.certificates import rotate_certificate, served_certificate

TESTS = Path(__file__).resolve().parents[1]


def test_flags_fill_the_options() -> None:
    options = parse_flags(
        [
            "--secure-port=8443",
            "--bind-address",
            "127.0.0.1",
            "--requestheader-allowed-names=front-proxy-client,aggregator",
            "--requestheader-allowed-names=third",
            "--authentication-token-webhook-cache-ttl=1m30s",
            "--authorization-webhook-cache-unauthorized-ttl=250ms",
            "--authentication-skip-lookup",
            "--anonymous-auth=false",
            "--authorization-always-allow-paths=/healthz,/debug/*",
            "--storage-backend=etcd3",
            "--etcd-servers=http://127.0.0.1:2379",
            "--etcd-prefix=/registry/wardle",
        ]
    )
    assert options.secure_serving.secure_port == 8443
    assert options.secure_serving.bind_address == "127.0.0.1"
    assert options.authentication.requestheader_allowed_names == ["front-proxy-client", "aggregator", "third"]
    assert options.authentication.cache_ttl == 90.0
    assert options.authorization.deny_cache_ttl == 0.25
    assert options.authorization.allow_cache_ttl == 10.0  # untouched: kube's default
    assert options.authentication.skip_in_cluster_lookup is True
    assert options.authentication.anonymous is False
    assert options.authorization.always_allow_paths == ["/healthz", "/debug/*"]
    assert (options.storage.backend, options.storage.etcd_servers) == ("etcd3", ["http://127.0.0.1:2379"])
    assert check(options) is options


def test_defaults_are_kubes() -> None:
    options = RecommendedOptions()
    assert options.secure_serving.secure_port == 443
    assert options.authentication.requestheader_username_headers == ["X-Remote-User"]
    assert options.authentication.requestheader_group_headers == ["X-Remote-Group"]
    assert options.authentication.requestheader_extra_headers_prefix == ["X-Remote-Extra-"]
    assert options.authorization.always_allow_paths == ["/healthz", "/readyz", "/livez"]
    assert (options.authentication.cache_ttl, options.authorization.allow_cache_ttl) == (10.0, 10.0)
    assert options.storage.backend == "memory"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--secure-port=https"], 'invalid argument "https" for "--secure-port" flag: strconv.ParseInt'),
        (["--authentication-token-webhook-cache-ttl=10"], 'time: invalid duration "10"'),
        (["--anonymous-auth=maybe"], 'invalid argument "maybe" for "--anonymous-auth" flag'),
        (["--etcd-server=http://x"], "unrecognized arguments: --etcd-server=http://x"),
    ],
)
def test_bad_flags_are_one_line(argv: list[str], message: str) -> None:
    with pytest.raises(FlagError) as raised:
        parse_flags(argv)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--secure-port=70000"], "--secure-port 70000 must be between 0 and 65535, inclusive"),
        (["--bind-address=localhost"], '--bind-address "localhost": not an IP address'),
        (["--tls-cert-file=/nonexistent/tls.crt"], "--tls-cert-file is set without its pair"),
        (["--storage-backend=sqlite"], '--storage-backend "sqlite": not one of memory, file, etcd3'),
        (["--storage-backend=etcd3"], "--storage-backend etcd3 needs --etcd-servers"),
        (["--storage-backend=etcd3", "--etcd-servers=127.0.0.1:2379"], '--etcd-servers "127.0.0.1:2379": not an'),
        (["--storage-backend=file"], "--storage-backend file needs --storage-path"),
        (["--client-ca-file=/nonexistent/ca.crt"], '--client-ca-file "/nonexistent/ca.crt": no such file'),
        (["--authorization-always-allow-paths=healthz"], '"healthz": paths must begin with /'),
        (["--authorization-always-allow-paths=/a*b"], '"/a*b": only a trailing * is allowed'),
        (["--requestheader-username-headers=X User"], '"X User": not an HTTP header name'),
    ],
)
def test_bad_values_are_named(argv: list[str], problem: str) -> None:
    with pytest.raises(OptionsError) as raised:
        check(parse_flags(argv))
    assert any(problem in line for line in raised.value.problems), raised.value.problems


def test_run_exits_2_on_bad_input_before_starting(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    os.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        run([wardle_group()], ["--secure-port=70000", "--storage-backend=nope"])
    assert exited.value.code == 2
    errors = capsys.readouterr().err.splitlines()
    assert errors == [
        "error: --secure-port 70000 must be between 0 and 65535, inclusive",
        'error: --storage-backend "nope": not one of memory, file, etcd3',
    ]
    assert list(tmp_path.iterdir()) == []  # nothing written (no certificate directory)


async def test_serves_until_sigterm_then_shuts_down_gracefully(tmp_path: Path) -> None:
    async with TestAPIServer() as core:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "apiserver.wardle_main",
            "--secure-port=0",
            "--bind-address=127.0.0.1",
            f"--cert-dir={tmp_path / 'certs'}",
            f"--authentication-kubeconfig={core.kubeconfig_path}",
            f"--authorization-kubeconfig={core.kubeconfig_path}",
            "--authentication-skip-lookup",
            "--shutdown-delay-duration=1s",
            cwd=TESTS,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])},
            stderr=asyncio.subprocess.PIPE,
        )
        assert process.stderr is not None
        url = ""
        while not url:
            line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
            assert line, "the server exited before serving"
            if " on https://" in line:
                url = line.rsplit(" on ", 1)[1].strip()
        assert (tmp_path / "certs" / "apiserver.crt").is_file()  # the self-signed serving pair, kept for restarts
        async with aiohttp.ClientSession() as session:

            async def readyz() -> int:
                async with session.get(url + "/readyz", ssl=False) as response:
                    return response.status

            assert await readyz() == 200
            process.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.3)
            assert await readyz() == 500  # not ready while the shutdown delay runs; still answering
        assert await asyncio.wait_for(process.wait(), 30) == 0


def test_admission_plugins_that_can_be_disabled() -> None:
    assert parse_flags(["--disable-admission-plugins=NamespaceLifecycle"]).disable_admission_plugins == [
        "NamespaceLifecycle"
    ]
    with pytest.raises(OptionsError) as raised:
        check(parse_flags(["--disable-admission-plugins=AlwaysPullImages"]))
    assert raised.value.problems == [
        '--disable-admission-plugins "AlwaysPullImages": not an admission plugin of this server (NamespaceLifecycle)'
    ]


async def test_a_renewed_serving_certificate_is_served(
    core: TestAPIServer, group: APIGroupVersion, options: RecommendedOptions, tmp_path: Path
) -> None:
    folder = tmp_path / "serving"
    folder.mkdir()
    first = rotate_certificate(folder)
    options.secure_serving.tls_cert_file = str(folder / "tls.crt")
    options.secure_serving.tls_private_key_file = str(folder / "tls.key")
    options.secure_serving.reload_interval = 0.05
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        port = int(server.url.rsplit(":", 1)[1])
        assert await served_certificate("127.0.0.1", port) == first
        second = rotate_certificate(folder)  # as the kubelet swaps a renewed Secret in
        for _ in range(100):
            if await served_certificate("127.0.0.1", port) == second:
                break
            await asyncio.sleep(0.05)
        assert await served_certificate("127.0.0.1", port) == second
