"""Reading an APIService's Available condition, and waiting (bounded) for the controller to set one."""

from __future__ import annotations

import asyncio
from typing import Any

from pyop.testing import TestAPIServer

GUARD = 15.0  # seconds: a failure guard only (the controller rechecks every second)
STORAGE_KEY = "apiservices.apiregistration.k8s.io"


def condition(server: TestAPIServer, name: str) -> dict[str, Any] | None:
    obj = server.store.get(STORAGE_KEY, "", name)
    for entry in ((obj or {}).get("status") or {}).get("conditions") or []:
        if entry["type"] == "Available":
            return dict(entry)
    return None


async def wait_for_condition(server: TestAPIServer, name: str, status: str, reason: str) -> dict[str, Any]:
    async with asyncio.timeout(GUARD):
        while True:
            found = condition(server, name)
            if found is not None and (found["status"], found["reason"]) == (status, reason):
                return found
            await asyncio.sleep(0.02)
