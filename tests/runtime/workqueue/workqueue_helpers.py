"""Helpers shared by the work-queue tests (a uniquely named module, so it never clashes with other suites)."""

from __future__ import annotations

import asyncio


async def settle(rounds: int = 10) -> None:
    """Let every ready task run until it blocks again (a few loop iterations, no real time)."""
    for _ in range(rounds):
        await asyncio.sleep(0)
