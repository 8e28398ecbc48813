"""The memo a schema's compilation shares: each (schema node, flags) compiled once, a schema containing itself
detected (possible in a Python-built schema, never in a CRD's JSON), so that the caller keeps interpreting it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class CyclicSchema(Exception):
    """The schema contains itself: compiling it would never end (the interpreter, driven by the value, copes)."""


class Guard:
    """Compiled forms by key (``(what, id(node), flags...)``; the nodes live as long as the root schema)."""

    def __init__(self) -> None:
        self.memo: dict[tuple[Any, ...], Any] = {}
        self.active: set[tuple[Any, ...]] = set()

    def run(self, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        """``build()``'s result, built once per key; CyclicSchema when ``build`` needs its own key."""
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            raise CyclicSchema
        self.active.add(key)
        try:
            built = self.memo[key] = build()
        finally:
            self.active.discard(key)
        return built


__all__ = ["CyclicSchema", "Guard"]
