"""The reflector: keeps a sink (the informer) in step with the server by list, then watch, forever.

What it guarantees, and how (client-go's `Reflector` semantics, plus a stall detector kopf's users needed):

- List (in pages, consistent snapshot) and hand the sink the full state; then watch from the list's
  resourceVersion with bookmarks, so a resumed watch starts from the newest version seen.
- A watch ends normally after `timeoutSeconds` (random in [min, 2*min], as client-go) or when the server
  closes
  it: watch again from the last resourceVersion, without relisting.
- 410 Gone / Expired (on the watch request or as an ERROR event): list again; the sink computes what changed
  while we were away, including deletions (delivered as tombstones).
- Any other failure (connection refused, 5xx, a watch closed at once with nothing in it): jittered exponential
  backoff, bounded at 1 s, then resume; a productive watch resets the backoff, so an informer is in step again
  within about a second of the API server answering after a restart or an outage (`pyop.informers.backoff`).
- A stream that stays silent longer than `stall_timeout` (no event and no bookmark; the server sends bookmarks
  about once a minute) is dropped and reopened: a half-open TCP connection never ends on its own.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pyop.client.dynamic import DynamicClient, EventType, ObjectList, WatchEvent
from pyop.client.errors import ApiConnectionError, ApiError, GoneError
from pyop.client.resources import APIResource
from pyop.client.selectors import LabelSelectorInput
from pyop.informers.backoff import Backoff

log = logging.getLogger(__name__)


class ReflectorSink(Protocol):
    """Receives what the reflector learns (implemented by the informer)."""

    def prepare(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Turn a listed object into its cached form (transform, interning) before `replace`."""
        ...

    def replace(self, items: list[dict[str, Any]], resource_version: str, namespace: str | None) -> None:
        """The complete state (of `namespace`, or of everything when None) as of `resource_version`; the items
        have been through `prepare`."""
        ...

    def apply_event(self, event: WatchEvent[dict[str, Any]]) -> None:
        """One ADDED, MODIFIED or DELETED event, in order."""
        ...


@dataclass
class ReflectorStats:
    """Counters for diagnostics and tests: what the reflector had to do to stay in step."""

    lists: int = 0
    watches: int = 0
    events: int = 0
    bookmarks: int = 0
    relists_after_gone: int = 0
    stalls: int = 0
    failures: int = 0


class Reflector:
    def __init__(
        self,
        client: DynamicClient,
        resource: APIResource,
        sink: ReflectorSink,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorInput = None,
        field_selector: str | Mapping[str, str] | None = None,
        page_size: int = 500,
        min_watch_timeout: float = 300.0,
        stall_timeout: float = 90.0,
        short_watch: float = 1.0,
        backoff: Backoff | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.client = client
        self.resource = resource
        self.sink = sink
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.page_size = page_size
        self.min_watch_timeout = min_watch_timeout
        self.stall_timeout = stall_timeout
        self.short_watch = short_watch
        self.backoff = backoff or Backoff()
        self._sleep = sleep
        self._rng = rng
        self.resource_version = ""
        self.synced = asyncio.Event()
        self.stats = ReflectorStats()

    @property
    def name(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.resource.plural}.{self.resource.group or 'core'}{where}"

    async def run(self) -> None:
        """List and watch until cancelled; never returns otherwise.

        A reflector run again after a stop resumes watching from its last resourceVersion (a 410 then still
        leads to a relist), so restarting an informer does not reload the whole cache.
        """
        need_list = not (self.synced.is_set() and self.resource_version)
        expiries_in_a_row = 0
        while True:
            try:
                if need_list:
                    await self._list()
                    need_list = False
                productive = await self._watch()
                if productive:
                    expiries_in_a_row = 0
                    self.backoff.reset()  # success: the next failure starts from the shortest delay again
                else:
                    await self._back_off("watch closed at once without events")
            except GoneError as error:
                self.stats.relists_after_gone += 1
                expiries_in_a_row += 1
                log.info(
                    "%s: resourceVersion %s expired (%s); listing again",
                    self.name,
                    self.resource_version,
                    error,
                )
                need_list = True
                if expiries_in_a_row > 1:
                    await self._back_off("resourceVersion expired again right after a list")
            except (ApiError, ApiConnectionError) as error:
                await self._back_off(str(error))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s: unexpected error; backing off", self.name)
                await self._back_off("unexpected error")

    async def _list(self) -> None:
        """Read a consistent snapshot page by page, preparing each page as it arrives.

        Preparing (transform, interning) per page lets the raw page be freed at once, so the peak memory of a
        sync stays near one cache rather than two. The next page is asked for (with the continue token, which is
        all it needs) before this one is prepared, so the server builds it while this process prepares: a sync
        costs the longer of the two rather than their sum. A continue token that expires between pages (410)
        falls back to one unpaginated list, as client-go's pager does.
        """
        prepare = self.sink.prepare
        items: list[dict[str, Any]] = []
        version = ""
        following: asyncio.Task[ObjectList[dict[str, Any]]] | None = None
        try:
            page = await self._page(None)
            while True:
                version = version or page.resource_version
                token = page.continue_token
                following = None
                if token:
                    following = asyncio.ensure_future(self._page(token))
                    await asyncio.sleep(0)  # let it send its request (it does so before its first wait)
                items.extend(prepare(obj) for obj in page.items)
                if following is None:
                    break
                page = await following
                following = None
        except GoneError:
            if not version:
                raise
            full = await self.client.list(
                self.resource, self.namespace, label_selector=self.label_selector, field_selector=self.field_selector
            )
            version = full.resource_version
            items = [prepare(obj) for obj in full.items]
        finally:
            if following is not None:  # this list failed or was cancelled while the next page was on its way
                following.cancel()
                following.add_done_callback(_retrieve)
        self.stats.lists += 1
        self.resource_version = version
        self.sink.replace(items, version, self.namespace)
        self.synced.set()

    async def _page(self, token: str | None) -> ObjectList[dict[str, Any]]:
        return await self.client.list(
            self.resource,
            self.namespace,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            limit=self.page_size,
            continue_token=token,
        )

    async def _watch(self) -> bool:
        """One watch request; returns whether it was productive (events seen or it lasted a while)."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        received = 0
        timeout_seconds = int(self.min_watch_timeout * (1.0 + self._rng()))
        self.stats.watches += 1
        now = loop.time
        try:
            async with asyncio.timeout(None) as deadline:
                with _SilenceWatch(deadline, self.stall_timeout) as silence:
                    async for event in self.client.watch(
                        self.resource,
                        self.namespace,
                        resource_version=self.resource_version,
                        label_selector=self.label_selector,
                        field_selector=self.field_selector,
                        timeout_seconds=timeout_seconds,
                        allow_bookmarks=True,
                    ):
                        silence.heard = now()
                        received += 1
                        self._handle(event)
        except TimeoutError:
            self.stats.stalls += 1
            log.warning(
                "%s: watch silent for %.0fs (no event or bookmark); reconnecting from %s",
                self.name,
                self.stall_timeout,
                self.resource_version,
            )
            return received > 0
        return received > 0 or loop.time() - started >= self.short_watch

    def _handle(self, event: WatchEvent[dict[str, Any]]) -> None:
        if event.type is EventType.BOOKMARK:
            self.stats.bookmarks += 1
        else:
            self.stats.events += 1
            self.sink.apply_event(event)
        if event.resource_version:
            self.resource_version = event.resource_version

    async def _back_off(self, reason: str) -> None:
        self.stats.failures += 1
        delay = self.backoff.next()
        log.warning("%s: %s; retrying in %.2fs", self.name, reason, delay)
        await self._sleep(delay)


class _SilenceWatch:
    """Expires `deadline` once nothing has been heard for `seconds` (`heard` is the loop time of the last event).

    One timer for the whole stream, re-armed only when it fires while events still arrive (at the last event
    plus `seconds`), so an event costs one attribute store; moving the deadline at every event made and
    cancelled a timer handle per event, thousands a second while a controller's own writes stream back.
    The silence allowed is exactly `seconds` either way.
    """

    def __init__(self, deadline: asyncio.Timeout, seconds: float) -> None:
        self._deadline = deadline
        self._seconds = seconds
        self._loop = asyncio.get_running_loop()
        self.heard = self._loop.time()
        self._timer: asyncio.TimerHandle | None = None

    def __enter__(self) -> _SilenceWatch:
        self._timer = self._loop.call_at(self.heard + self._seconds, self._check)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        due = self.heard + self._seconds
        if due <= self._loop.time():
            self._timer = None
            self._deadline.reschedule(due)  # in the past: the deadline expires at once (TimeoutError)
        else:
            self._timer = self._loop.call_at(due, self._check)


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Read the outcome of a page nobody waits for any more, so asyncio does not report it as never retrieved."""
    if not task.cancelled():
        task.exception()
