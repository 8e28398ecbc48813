"""--storage-backend: the durable backend beneath the watch cache (`pyop.apiserver.storage.factory`, the etcd
developer's), and the watch cache over it.

``memory`` (default: gone with the process), ``file`` (--storage-path: an append-only log file, or a folder to
keep ``objects.jsonl`` in; survives restarts), ``etcd3`` (--etcd-servers, --etcd-prefix,
--etcd-cafile/--etcd-certfile/--etcd-keyfile: resourceVersions are etcd revisions, watches come from etcd's,
compaction answers 410).
"""

from __future__ import annotations

from pathlib import Path

from pyop.apiserver.server.options import StorageOptions
from pyop.apiserver.storage.factory import backend_from_flags
from pyop.apiserver.storage.store import Store


def store_for(options: StorageOptions, history_limit: int = 10_000) -> Store:
    """The watch cache over the backend the options name (`ValueError`: a bad combination, one line)."""
    path = options.path
    if path and (path.endswith("/") or Path(path).is_dir()):
        path = str(Path(path) / "objects.jsonl")  # a folder: the log file in it
    backend = backend_from_flags(
        options.backend,
        storage_path=path or None,
        etcd_servers=options.etcd_servers,
        etcd_prefix=options.etcd_prefix,
        etcd_cafile=options.etcd_cafile or None,
        etcd_certfile=options.etcd_certfile or None,
        etcd_keyfile=options.etcd_keyfile or None,
    )
    return Store(history_limit, backend)


__all__ = ["store_for"]
