"""The admission chain as the HTTP handler drives it: what a server plugs in to see, change or refuse writes.

The registry is synchronous and stops at its admission points (`points.suspend`) only while
``Operations.admission_active`` is true; the chain is what runs a write across those stops (awaiting webhooks on
the event loop) and what bridged reads use to call network services in the middle of a read (conversion
webhooks). The test API server's chain is `pyop.testing.webhooks.dispatch.WebhookDispatcher`; a server with no
admission plugins passes none, and its writes run straight through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class AdmissionChain(Protocol):
    """Drives writes through admission; ``caller`` makes the network calls bridged reads need (or is None)."""

    caller: Any

    async def drive(self, write: Callable[[Any], T], body: Any, warnings: list[str]) -> T:
        """Run ``write(body)`` through admission, collecting the plugins' warnings into ``warnings``."""
        ...

    async def close(self) -> None:
        """Release what the chain holds (HTTP sessions) when the server stops."""
        ...


__all__ = ["AdmissionChain"]
