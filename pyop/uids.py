"""Random (version 4) UUIDs as strings, as `str(uuid.uuid4())` makes them, 256 at a time from one `os.urandom` read.

kube-apiserver gives every new object a random UUID (`metadata.uid`) and controller-runtime every reconcile one
(for its log lines). `str(uuid.uuid4())` reads the kernel's random source and builds a `uuid.UUID` object each
time: several microseconds, a few percent of a create in the test server. The same strings, from the same source
and with the same version and variant bits, cost a fraction of that when made in batches. A forked child starts
a batch of its own (it must not hand out its parent's ids). A top-level module (as pyop.gcpolicy): the runtime
and the API servers share it, and it imports nothing of either.
"""

from __future__ import annotations

import os
import weakref

_BATCH = 256


class RandomUIDs:
    """A source of version 4 UUID strings; `next` is `str(uuid.uuid4())` for a batch read from `os.urandom`."""

    __slots__ = ("_ready", "__weakref__")

    def __init__(self) -> None:
        self._ready: list[str] = []
        _sources.add(self)

    def reset(self) -> None:
        """Forget the batch made so far (after a fork: the parent hands those out)."""
        self._ready = []

    def next(self) -> str:
        if not self._ready:
            self._ready = format_uids(os.urandom(16 * _BATCH))
        return self._ready.pop()


def format_uids(raw: bytes) -> list[str]:
    """``raw`` (a multiple of 16 bytes) as the strings `str(uuid.UUID(bytes=chunk, version=4))` makes of its
    16-byte chunks: the version nibble set to 4 and the variant bits to RFC 4122's, lower-case hex with dashes."""
    chunks = bytearray(raw)
    for start in range(0, len(chunks), 16):
        chunks[start + 6] = (chunks[start + 6] & 0x0F) | 0x40  # version 4
        chunks[start + 8] = (chunks[start + 8] & 0x3F) | 0x80  # the RFC 4122 variant
    text = chunks.hex()
    return [
        f"{text[i : i + 8]}-{text[i + 8 : i + 12]}-{text[i + 12 : i + 16]}-{text[i + 16 : i + 20]}-"
        f"{text[i + 20 : i + 32]}"
        for i in range(0, len(text), 32)
    ]


_sources: weakref.WeakSet[RandomUIDs] = weakref.WeakSet()


def _after_fork() -> None:
    for source in _sources:
        source.reset()


os.register_at_fork(after_in_child=_after_fork)

_uids = RandomUIDs()
new_uid = _uids.next  # one process-wide source: `new_uid()` is a fresh object uid


__all__ = ["RandomUIDs", "format_uids", "new_uid"]
