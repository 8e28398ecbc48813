"""Fixtures: a test API server serving the Widget CRD, and clients pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

import pytest
import pytest_asyncio
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from pyop.client import Client, Transport
from pyop.testing import TestAPIServer

GROUP = "example.pyop.dev"

WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.selector",
                    },
                },
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer", "minimum": 0},
                                    "color": {"type": "string"},
                                    "tags": {"type": "array", "items": {"type": "string"}},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer"},
                                    "selector": {"type": "string"},
                                    "phase": {"type": "string"},
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}


class Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class Meta(Wire):
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    finalizers: list[str] | None = None
    deletion_timestamp: str | None = None


class WidgetSpec(Wire):
    replicas: int | None = None
    color: str | None = None
    tags: list[str] | None = None


class WidgetStatus(Wire):
    replicas: int | None = None
    selector: str | None = None
    phase: str | None = None


class Widget(Wire):
    """A CRD model declaring its resource with the class-variable convention."""

    __group__: ClassVar[str] = GROUP
    __version__: ClassVar[str] = "v1"
    __kind__: ClassVar[str] = "Widget"
    __plural__: ClassVar[str] = "widgets"
    __namespaced__: ClassVar[bool] = True

    api_version: str = Field(default=f"{GROUP}/v1", alias="apiVersion")
    kind: str = "Widget"
    metadata: Meta = Field(default_factory=Meta)
    spec: WidgetSpec = Field(default_factory=WidgetSpec)
    status: WidgetStatus | None = None


def widget(name: str, namespace: str = "default", **spec: Any) -> Widget:
    labels = spec.pop("labels", None)
    return Widget(metadata=Meta(name=name, namespace=namespace, labels=labels), spec=WidgetSpec(**spec))


@pytest_asyncio.fixture
async def server(test_api_server: TestAPIServer) -> AsyncIterator[TestAPIServer]:
    test_api_server.add_crd(WIDGET_CRD)
    yield test_api_server


class RecordingSleep:
    """Stands in for asyncio.sleep in retry paths: records the waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> RecordingSleep:
    return RecordingSleep()


@pytest_asyncio.fixture
async def client(server: TestAPIServer, sleeps: RecordingSleep) -> AsyncIterator[Client]:
    transport = Transport(server.client_config(), sleep=sleeps)
    async with Client(transport) as client:
        yield client
