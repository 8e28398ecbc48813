"""A throw-away etcd on loopback (free ports, a temporary data dir) for tests and benchmarks.

``find_etcd`` looks for the binary in ``$PYOP_ETCD``, then on ``PATH`` (Debian's etcd-server installs
``/usr/bin/etcd``); ``LocalEtcd`` runs it until ``stop``, which kills it and removes the data dir unless it was
given one (restart tests stop and start the same dir). With ``server_tls`` (certificate, key, client CA files) it
serves https and requires client certificates signed by that CA (``--client-cert-auth``); ``client_tls`` is what
its own readiness probe connects with.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from pyop.apiserver.storage.etcd.client import EtcdClient, EtcdError, TLSOptions


def find_etcd() -> str | None:
    configured = os.environ.get("PYOP_ETCD")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("etcd")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LocalEtcd:
    def __init__(
        self,
        binary: str,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        server_tls: tuple[str, str, str] | None = None,
        client_tls: TLSOptions | None = None,
    ) -> None:
        self.binary = binary
        self.server_tls = server_tls
        self.client_tls = client_tls
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir) if data_dir is not None else Path(tempfile.mkdtemp(prefix="pyop-etcd-"))
        self.client_port = _free_port()
        self.peer_port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._log = self.data_dir.with_name(self.data_dir.name + ".log")

    @property
    def url(self) -> str:
        return f"{'https' if self.server_tls else 'http'}://127.0.0.1:{self.client_port}"

    def start(self, timeout: float = 20.0) -> LocalEtcd:
        peer = f"http://127.0.0.1:{self.peer_port}"
        command = [
            self.binary,
            "--name=pyop-test",
            f"--data-dir={self.data_dir}",
            f"--listen-client-urls={self.url}",
            f"--advertise-client-urls={self.url}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=pyop-test={peer}",
            "--log-level=error",
        ]
        if self.server_tls is not None:
            certificate, key, client_ca = self.server_tls
            command += [f"--cert-file={certificate}", f"--key-file={key}", f"--trusted-ca-file={client_ca}"]
            command.append("--client-cert-auth")
        with open(self._log, "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        client = EtcdClient(self.url, timeout=1.0, tls=self.client_tls)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"etcd exited with {self.process.returncode}: {self._log.read_text()[-2000:]}")
                try:
                    client.status()
                    return self
                except EtcdError:
                    if time.monotonic() > deadline:
                        self.stop()
                        raise RuntimeError(f"etcd did not answer on {self.url} within {timeout}s") from None
                    time.sleep(0.05)
        finally:
            client.close()

    def stop(self, *, keep_data: bool = False) -> None:
        """Stop etcd; the data dir stays when ``keep_data`` (to start it again) or when it was the caller's."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self._own_dir and not keep_data:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self._log.unlink(missing_ok=True)

    def restart(self) -> None:
        """Stop and start again on the same ports and data: clients see a dropped connection, then the same etcd."""
        self.stop(keep_data=True)
        self.start()

    def __enter__(self) -> LocalEtcd:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
