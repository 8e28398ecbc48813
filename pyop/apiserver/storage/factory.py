"""The backend that ``--storage-backend`` and its companion flags name (k8s.io/apiserver's storagebackend.Config).

``memory`` (the default: the process's lifetime), ``file`` (``--storage-path``: one process, survives restarts) and
``etcd3`` (``--etcd-servers``, ``--etcd-prefix``, ``--etcd-cafile``/``--etcd-certfile``/``--etcd-keyfile``,
``--etcd-compaction-interval`` in seconds: 300 as kube-apiserver's 5m, 0 never).
Bad combinations are a ``ValueError`` naming the flag and what is allowed, for the caller's exit-code-2 message.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyop.apiserver.storage.backend import Backend

BACKENDS = ("memory", "file", "etcd3")


def backend_from_flags(
    storage_backend: str = "memory",
    *,
    storage_path: str | None = None,
    etcd_servers: Sequence[str] = (),
    etcd_prefix: str = "/registry",
    etcd_cafile: str | None = None,
    etcd_certfile: str | None = None,
    etcd_keyfile: str | None = None,
    etcd_compaction_interval: float = 300.0,
) -> Backend:
    if storage_backend == "memory":
        from pyop.apiserver.storage.memory import MemoryBackend

        return MemoryBackend()
    if storage_backend == "file":
        if not storage_path:
            raise ValueError("--storage-backend=file needs --storage-path (the log file to keep objects in)")
        from pyop.apiserver.storage.file import FileBackend

        return FileBackend(storage_path)
    if storage_backend == "etcd3":
        servers = [server for entry in etcd_servers for server in entry.split(",") if server]
        if not servers:
            raise ValueError("--storage-backend=etcd3 needs --etcd-servers (e.g. http://127.0.0.1:2379)")
        if bool(etcd_certfile) != bool(etcd_keyfile):
            raise ValueError("--etcd-certfile and --etcd-keyfile go together (a client certificate and its key)")
        from pyop.apiserver.storage.etcd.backend import EtcdBackend
        from pyop.apiserver.storage.etcd.client import EtcdClient, TLSOptions

        client = EtcdClient(servers, tls=TLSOptions(etcd_cafile, etcd_certfile, etcd_keyfile))
        return EtcdBackend(client, etcd_prefix, compaction_interval=etcd_compaction_interval)
    raise ValueError(f"--storage-backend={storage_backend!r} is not one of {', '.join(BACKENDS)}")
