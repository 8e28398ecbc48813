"""The APIService ``Available`` condition, kept as kube-aggregator's AvailableConditionController keeps it.

Every APIService is checked when it, or the Service or Endpoints it names, changes, and again every
``resync_interval`` seconds (kube resyncs every 30 s; the test server's default is 1 s, so that a test sees a
stopped server promptly). A Local APIService (no ``spec.service``) is always Available (reason ``Local``); one whose
Service cannot be routed to gets the resolver's reason (``ServiceNotFound``, ``ServicePortError``,
``EndpointsNotFound``, ``MissingEndpoints``); otherwise the server's ``/apis/<group>/<version>`` is fetched with the
front-proxy client certificate as ``system:kube-aggregator`` in ``system:masters``, without verifying the server's
certificate (kube's check does not either: it only asks whether something answers), and any answer outside
200-299, or none within 5 s, is ``FailedDiscoveryCheck``; else ``Passed``. The condition's lastTransitionTime moves
only when its status changes, and an unchanged status is not written again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from pyop.api.status import ApiError
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.apiserver.registry.patch import clone_json
from pyop.apiserver.storage.store import StoredEvent
from pyop.testing.aggregator.apiservice import AVAILABLE, GROUP, STORAGE_KEY, APIServiceSpec, with_condition
from pyop.testing.aggregator.certificates import FrontProxyIdentity
from pyop.testing.aggregator.proxy import describe, identity_headers
from pyop.testing.aggregator.resolver import resolve

log = logging.getLogger(__name__)

CHECK_TIMEOUT = 5.0
AGGREGATOR_USER = "system:kube-aggregator"
_CHECKER = UserInfo(AGGREGATOR_USER, ["system:masters"])
_MANAGER = "kube-apiserver"
Condition = tuple[str, str, str]  # status, reason, message


def discovery_path(spec: APIServiceSpec) -> str:
    return f"/api/{spec.version}" if spec.name == "v1." else f"/apis/{spec.group}/{spec.version}"


class AvailabilityController:
    """Owns the Available condition of every APIService; ``on_checked`` runs after each check of a routable one
    (the discovery cache refreshes from it)."""

    def __init__(
        self,
        operations: Operations,
        identity: FrontProxyIdentity,
        session: Callable[[], aiohttp.ClientSession],
        *,
        resync_interval: float,
        on_checked: Callable[[APIServiceSpec, str, bool], Awaitable[None]] | None = None,
    ) -> None:
        self.operations = operations
        self.store = operations.store
        self.identity = identity
        self.resync_interval = resync_interval
        self.on_checked = on_checked
        self._session = session
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._queued: set[str] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._insecure: ssl.SSLContext | None = None  # made at the first check (no APIService, no cost)

    # --- the store's events (called inside a commit: only enqueue) -------------------------------------

    def deliver(self, event: StoredEvent) -> None:
        if event.storage_key == STORAGE_KEY:
            self.enqueue(event.obj["metadata"]["name"])
            return
        metadata = event.obj["metadata"]
        for obj in self.store.objects(STORAGE_KEY):
            service = (obj.get("spec") or {}).get("service") or {}
            if service.get("namespace") == metadata.get("namespace") and service.get("name") == metadata["name"]:
                self.enqueue(obj["metadata"]["name"])

    def enqueue(self, name: str) -> None:
        if name not in self._queued:
            self._queued.add(name)
            self._queue.put_nowait(name)

    # --- lifecycle ---------------------------------------------------------------------------------------

    def start(self) -> None:
        for key in (STORAGE_KEY, "services", "endpoints"):
            self.store.subscribe(key, self)
        for obj in self.store.objects(STORAGE_KEY):
            self.enqueue(obj["metadata"]["name"])
        self._tasks = [
            asyncio.create_task(self._work(), name="pyop-test-aggregator-availability"),
            asyncio.create_task(self._resync(), name="pyop-test-aggregator-resync"),
        ]

    async def stop(self) -> None:
        for key in (STORAGE_KEY, "services", "endpoints"):
            self.store.unsubscribe(key, self)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def _work(self) -> None:
        while True:
            name = await self._queue.get()
            self._queued.discard(name)
            try:
                await self.sync(name)
            except Exception:  # a controller keeps running whatever one object does
                log.exception("availability check of APIService %s failed", name)

    async def _resync(self) -> None:
        while True:
            await asyncio.sleep(self.resync_interval)
            for obj in list(self.store.objects(STORAGE_KEY)):
                self.enqueue(obj["metadata"]["name"])

    # --- one check ----------------------------------------------------------------------------------------

    async def sync(self, name: str) -> None:
        """Check one APIService now and write its condition when it changed."""
        obj = self.store.get(STORAGE_KEY, "", name)
        if obj is None:
            return
        spec = APIServiceSpec.of(obj)
        if spec.service is None:
            self._write(name, ("True", "Local", "Local APIServices are always available"))
            return
        resolution = resolve(self.store, spec.service)
        if resolution.reason:
            self._write(name, ("False", resolution.reason, resolution.message))
            return
        failure = await self._check(resolution.url + discovery_path(spec))
        self._write(
            name, ("False", "FailedDiscoveryCheck", failure) if failure else ("True", "Passed", "all checks passed")
        )
        if self.on_checked is not None:
            await self.on_checked(spec, resolution.url, not failure)

    async def _check(self, url: str) -> str:
        """The failure message of a discovery check, empty when it passed."""
        headers = identity_headers(_CHECKER)
        if self._insecure is None:
            self._insecure = self.identity.client_context(None, insecure=True)
        try:
            async with self._session().get(
                url,
                headers=headers,
                ssl=self._insecure,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=CHECK_TIMEOUT),
            ) as response:
                if not 200 <= response.status < 300:
                    return f"failing or missing response from {url}: bad status from {url}: {response.status}"
        except TimeoutError:
            return f"failing or missing response from {url}: timed out waiting for {url}"
        except (aiohttp.ClientError, OSError) as error:
            return f'failing or missing response from {url}: Get "{url}": {describe(error, url)}'
        return ""

    def _write(self, name: str, condition: Condition) -> None:
        obj = self.store.get(STORAGE_KEY, "", name)
        if obj is None:
            return
        status, reason, message = condition
        wanted: dict[str, Any] = {
            "type": AVAILABLE,
            "status": status,
            "lastTransitionTime": self.operations.now(),
            "reason": reason,
            "message": message,
        }
        current = obj.get("status") or {}
        new_status = with_condition(current, wanted)
        if new_status == current:
            return
        resource_type = self.operations.resources.lookup(GROUP, "v1", "apiservices")
        body = clone_json(obj)
        body["status"] = new_status
        try:
            self.operations.update(
                resource_type, "", name, body, WriteOptions(field_manager=_MANAGER), subresource="status"
            )
        except ApiError as error:  # changed or deleted meanwhile: look again
            if error.code == 409:
                self.enqueue(name)
