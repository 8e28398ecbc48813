"""Reload a server's TLS certificate when its files change (controller-runtime's `certwatcher`).

cert-manager renews the metrics certificate in its Secret, and the kubelet swaps the mounted files in place
(a new `..data` symlink target). A server that loaded the files once would serve the old certificate until it
expires. The watcher compares the files' identity (inode, size, modification time, through the symlinks) at an
interval, 10 s as controller-runtime's default, and loads a changed pair into the same `ssl.SSLContext`: new
connections get the new certificate, open ones keep theirs. A pair that does not load (caught half written, a
key that does not match) is logged and retried at the next tick; the old certificate stays in service.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from pathlib import Path

__all__ = ["CertWatcher"]

log = logging.getLogger("pyop.certwatcher")

_Identity = tuple[tuple[int, int, int], ...]


class CertWatcher:
    """Keeps `context`'s certificate and key equal to the files at `certificate` and `key`."""

    def __init__(self, context: ssl.SSLContext, certificate: Path, key: Path, *, interval: float = 10.0) -> None:
        self.context = context
        self.certificate = certificate
        self.key = key
        self.interval = interval
        self.reloads = 0
        self._loaded: _Identity | None = self._identity()

    def check(self) -> bool:
        """Load the files if they changed since they were last loaded; True when a new pair went in."""
        identity = self._identity()
        if identity is None or identity == self._loaded:
            return False
        try:
            self.context.load_cert_chain(self.certificate, self.key)
        except (OSError, ssl.SSLError) as error:
            log.error(
                "could not load the changed TLS certificate; still serving the previous one",
                extra={"certificate": str(self.certificate), "key": str(self.key), "error": repr(error)},
            )
            return False
        self._loaded = identity
        self.reloads += 1
        log.info("Updated current TLS certificate", extra={"certificate": str(self.certificate)})
        return True

    async def run(self) -> None:
        """Check every `interval` seconds until cancelled."""
        while True:
            await asyncio.sleep(self.interval)
            self.check()

    def _identity(self) -> _Identity | None:
        try:
            stats = [os.stat(path) for path in (self.certificate, self.key)]
        except OSError:
            return None  # between the removal of the old files and the arrival of the new ones
        return tuple((stat.st_ino, stat.st_size, stat.st_mtime_ns) for stat in stats)
