"""The handle the contract suite opens backends with (a restart is ``open()`` after ``close()``)."""

from __future__ import annotations

from collections.abc import Callable

from pyop.apiserver.storage.backend import Backend


class Opener:
    """Opens the backend under test; ``open()`` again after ``close()`` is a restart over the same storage."""

    def __init__(self, name: str, make: Callable[[], Backend]) -> None:
        self.name = name
        self._make = make
        self.opened: list[Backend] = []

    def open(self) -> Backend:
        backend = self._make()
        self.opened.append(backend)
        return backend

    def close_all(self) -> None:
        for backend in self.opened:
            backend.close()
