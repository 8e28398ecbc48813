"""The shared informer factory: one informer per resource (and selector), however many controllers ask.

Controllers of one manager that watch the same kind (a controller for `Captain` and another that owns
`Captain` objects) must share a cache and a watch, or the API server sees duplicate watches and the
controllers see different moments of the world. The factory hands out the same `Informer` for the same
(resource, namespaces, selectors).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from pyop.client.dynamic import DynamicClient
from pyop.client.resources import APIResource, resource_for_model
from pyop.client.selectors import LabelSelectorInput, format_field_selector, format_label_selector
from pyop.client.typed import Client
from pyop.informers.informer import Informer
from pyop.informers.lister import Lister

M = TypeVar("M", bound=BaseModel)
_InformerKey = tuple[APIResource, str | None, str | None]


class SharedInformerFactory:
    """Creates and owns informers; `start()` runs those not yet running, `shutdown()` stops them all.

    `namespaces` restricts every informer of namespaced resources to those namespaces (a namespaced operator);
    other keyword arguments are passed to each `Informer` (resync_period, stall_timeout, page_size, ...).
    """

    def __init__(
        self,
        client: Client | DynamicClient,
        *,
        namespaces: Sequence[str] | None = None,
        **informer_options: Any,
    ) -> None:
        self.client = client.dynamic if isinstance(client, Client) else client
        self.namespaces = tuple(namespaces) if namespaces else None
        self._options = informer_options
        self._informers: dict[_InformerKey, Informer] = {}
        self._started = False

    def informer(
        self,
        target: type[BaseModel] | APIResource,
        *,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
    ) -> Informer:
        """The shared informer of a model class or resource; created on first request.

        Informers requested after `start()` are started at once (inside a running loop).
        """
        resource = target if isinstance(target, APIResource) else resource_for_model(target)
        key = (resource, format_label_selector(label_selector), format_field_selector(field_selector))
        informer = self._informers.get(key)
        if informer is None:
            informer = Informer(
                self.client,
                resource,
                namespaces=self.namespaces,
                label_selector=label_selector,
                field_selector=field_selector,
                **self._options,
            )
            self._informers[key] = informer
            if self._started:
                informer.start()
        return informer

    async def informer_for_kind(self, api_version: str, kind: str, **selectors: Any) -> Informer:
        """The shared informer of a kind without a model class (mapped through discovery)."""
        return self.informer(await self.client.resource(api_version, kind), **selectors)

    def lister(self, model: type[M], **selectors: Any) -> Lister[M]:
        """A typed lister over the shared informer of `model`."""
        return Lister(self.informer(model, **selectors).store, model)

    @property
    def informers(self) -> list[Informer]:
        return list(self._informers.values())

    def start(self) -> None:
        self._started = True
        for informer in self._informers.values():
            informer.start()

    async def wait_for_cache_sync(self, timeout: float | None = None) -> dict[APIResource, bool]:
        """Wait for every informer's first list; the result says which synced within `timeout`."""
        informers = list(self._informers.values())
        results = await asyncio.gather(*(informer.wait_for_sync(timeout) for informer in informers))
        synced: dict[APIResource, bool] = {}
        for informer, ok in zip(informers, results, strict=True):
            synced[informer.resource] = synced.get(informer.resource, True) and ok
        return synced

    async def shutdown(self) -> None:
        self._started = False
        await asyncio.gather(*(informer.stop() for informer in self._informers.values()))

    async def __aenter__(self) -> SharedInformerFactory:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()
