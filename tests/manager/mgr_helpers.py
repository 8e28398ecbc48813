"""Shared pieces of the manager tests: a Widget CRD and model, a manager factory, waiting helpers.

Named uniquely (not `helpers.py`) because pytest imports test-folder modules by basename.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import Field

from pyop.api import Condition, GroupVersion, KubeModel, ObjectMeta, Resource
from pyop.controller import Request, Result
from pyop.informers import Backoff
from pyop.manager import Manager, ManagerOptions
from pyop.testing import TestAPIServer, schemaless_crd

GROUP = "mgr.pyop.dev"


class WidgetStatus(KubeModel):
    conditions: list[Condition] = Field(default_factory=list)


class Widget(Resource, group_version=GroupVersion(GROUP, "v1")):
    spec: dict[str, Any] = Field(default_factory=dict)
    status: WidgetStatus | None = None


WIDGET_CRD = schemaless_crd(GROUP, "Widget", "widgets")


def widget(name: str, namespace: str = "default") -> Widget:
    return Widget(metadata=ObjectMeta(name=name, namespace=namespace))


def fast_backoff() -> Backoff:
    return Backoff(initial=0.01, cap=0.1, jitter=0.5)


def manager_for(server: TestAPIServer, **options: Any) -> Manager:
    """A manager on the test server: servers off, no signal handling, quick informer recovery."""
    options.setdefault("handle_signals", False)
    options.setdefault("graceful_shutdown_timeout", 5.0)
    options.setdefault("cache_sync_timeout", 10.0)
    informer_options = {"backoff": fast_backoff, "stall_timeout": 2.0, **options.pop("informer_options", {})}
    return Manager(
        ManagerOptions(
            config=server.client_config(),
            informer_options=informer_options,
            **options,
        )
    )


class Counting:
    """A reconciler that records the requests it was given."""

    def __init__(self) -> None:
        self.requests: list[Request] = []

    async def reconcile(self, request: Request) -> Result:
        self.requests.append(request)
        return Result()

    def names(self) -> set[str]:
        return {request.name for request in self.requests}


async def eventually(condition: Callable[[], bool], timeout: float = 20.0, message: str = "") -> None:
    """Wait until `condition()` holds; the timeout only guards against a hang."""
    try:
        async with asyncio.timeout(timeout):
            while not condition():
                await asyncio.sleep(0.005)
    except TimeoutError:
        raise AssertionError(f"condition not reached within {timeout}s {message}") from None
