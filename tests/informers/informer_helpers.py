"""Fixtures for informer tests: a test API server with the Widget CRD and quick bookmarks, a dynamic client, and
a handler that checks the event sequence it receives is a valid history."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest_asyncio

from pyop.client import APIResource, Client, DynamicClient, Transport
from pyop.informers import Backoff, DeletedFinalStateUnknown, Informer, object_key
from pyop.testing import TestAPIServer, schemaless_crd

GROUP = "example.pyop.dev"
WIDGETS = APIResource(GROUP, "v1", "Widget", "widgets", True)

WIDGET_CRD = schemaless_crd(GROUP, "Widget", "widgets")

NAMESPACES = ("default", "team-a", "team-b", "team-c")


@pytest_asyncio.fixture
async def server() -> AsyncIterator[TestAPIServer]:
    async with TestAPIServer(bookmark_interval=0.1) as server:
        server.add_crd(WIDGET_CRD)
        yield server


@pytest_asyncio.fixture
async def dynamic(server: TestAPIServer) -> AsyncIterator[DynamicClient]:
    async with Transport(server.client_config()) as transport:
        client = DynamicClient(transport)
        namespaces = await client.resource("v1", "Namespace")
        for namespace in NAMESPACES[1:]:
            await client.create(namespaces, {"metadata": {"name": namespace}})
        yield client


def fast_backoff() -> Backoff:
    return Backoff(initial=0.01, cap=0.05, jitter=0.5)


def make_informer(dynamic: DynamicClient, **options: Any) -> Informer:
    """An informer tuned for tests: tiny backoff, stall detection well above the 0.1 s bookmark interval."""
    options.setdefault("stall_timeout", 1.0)
    options.setdefault("backoff", fast_backoff)
    return Informer(dynamic, WIDGETS, **options)


def body(name: str, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    labels = spec.pop("labels", None)
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": metadata, "spec": spec}


def rv(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["resourceVersion"])


class Recorder:
    """An event handler that replays what it hears into its own map and notes every impossible step.

    If the informer loses or duplicates anything, `state` drifts from the server or `problems` fills up:
    an add for a key already present, an update or delete for an absent key, an update whose `old` is not
    what the handler last saw.
    """

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.state: dict[str, dict[str, Any]] = {}
        self.problems: list[str] = []
        self.tombstones: list[DeletedFinalStateUnknown] = []

    def on_add(self, obj: dict[str, Any]) -> None:
        key = object_key(obj)
        self.events.append(("add", key))
        if key in self.state:
            self.problems.append(f"add of present {key}")
        self.state[key] = obj

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        key = object_key(new)
        self.events.append(("update", key))
        if key not in self.state:
            self.problems.append(f"update of absent {key}")
        elif rv(self.state[key]) != rv(old):
            self.problems.append(f"update of {key}: old {rv(old)} but last seen {rv(self.state[key])}")
        self.state[key] = new

    def on_delete(self, obj: dict[str, Any] | DeletedFinalStateUnknown) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.tombstones.append(obj)
            key = obj.key
        else:
            key = object_key(obj)
        self.events.append(("delete", key))
        if self.state.pop(key, None) is None:
            self.problems.append(f"delete of absent {key}")

    def versions(self) -> dict[str, str]:
        return {key: rv(obj) for key, obj in self.state.items()}


async def server_versions(dynamic: DynamicClient, namespaces: tuple[str, ...] | None = None) -> dict[str, str]:
    if namespaces is None:
        items = (await dynamic.list(WIDGETS)).items
    else:
        items = [item for ns in namespaces for item in (await dynamic.list(WIDGETS, ns)).items]
    return {object_key(item): rv(item) for item in items}


async def eventually(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    """Wait for `condition` (polling); the timeout only guards against a hang."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def converged(informer: Informer, recorder: Recorder, dynamic: DynamicClient, **kwargs: Any) -> None:
    """Wait until cache and handler both match the server, then check the handler saw a valid history."""
    expected = await server_versions(dynamic, **kwargs)

    def cache_versions() -> dict[str, str]:
        return {object_key(obj): rv(obj) for obj in informer.store.list()}

    try:
        await eventually(lambda: cache_versions() == expected and recorder.versions() == expected)
    except TimeoutError:
        raise AssertionError(
            f"no convergence: server {expected} cache {cache_versions()} handler {recorder.versions()}"
        ) from None
    assert recorder.problems == []


@pytest_asyncio.fixture
async def client_and_server(dynamic: DynamicClient, server: TestAPIServer) -> tuple[Client, TestAPIServer]:
    """A typed client sharing the dynamic fixture's connection."""
    return Client(dynamic.transport, dynamic.mapper), server
