"""Shared pieces of the controller tests: a Widget CRD and models, a ConfigMap model, and waiting helpers.

Named uniquely (not `helpers.py`) because pytest imports test-folder modules by basename.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import Field

from pyop.api import Condition, GroupVersion, KubeModel, ObjectMeta, Resource
from pyop.informers import Backoff
from pyop.manager import Manager, ManagerOptions
from pyop.testing import TestAPIServer, schemaless_crd

GROUP = "ctrl.pyop.dev"
GROUP_VERSION = GroupVersion(GROUP, "v1")
CORE_V1 = GroupVersion("", "v1")


class WidgetSpec(KubeModel):
    size: int = 0


class WidgetStatus(KubeModel):
    conditions: list[Condition] = Field(default_factory=list)


class Widget(Resource, group_version=GROUP_VERSION):
    spec: WidgetSpec = Field(default_factory=WidgetSpec)
    status: WidgetStatus | None = None


class Gadget(Resource, group_version=GROUP_VERSION):
    """A second custom kind, for owner references to a kind that is not the controller's."""

    spec: dict[str, Any] = Field(default_factory=dict)


class ConfigMap(Resource, group_version=CORE_V1):
    """The few ConfigMap fields the tests use (pyop ships no built-in models; operators declare what they need)."""

    data: dict[str, str] | None = None


def crd(kind: str, plural: str, *, scope: str = "Namespaced") -> dict[str, Any]:
    return schemaless_crd(GROUP, kind, plural, scope=scope)


WIDGET_CRD = crd("Widget", "widgets")
GADGET_CRD = crd("Gadget", "gadgets")


def widget(name: str, namespace: str = "default", size: int = 0, **metadata: Any) -> Widget:
    return Widget(metadata=ObjectMeta(name=name, namespace=namespace, **metadata), spec=WidgetSpec(size=size))


def fast_backoff() -> Backoff:
    return Backoff(initial=0.01, cap=0.1, jitter=0.5)


def manager_for(server: TestAPIServer, **options: Any) -> Manager:
    """A manager on the test server: no servers, no signal handling, quick informer recovery."""
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


async def eventually(condition: Callable[[], bool], timeout: float = 20.0, message: str = "") -> None:
    """Wait until `condition()` holds; the timeout only guards against a hang."""
    try:
        async with asyncio.timeout(timeout):
            while not condition():
                await asyncio.sleep(0.005)
    except TimeoutError:
        raise AssertionError(f"condition not reached within {timeout}s {message}") from None
