"""Kubernetes Events about the objects a controller handles (`kubectl describe` shows them).

client-go's recorder in miniature: `recorder.event(obj, "Normal", "Created", "created ConfigMap x")` returns at
once and never raises; a background task (the broadcaster, one per manager) writes core/v1 Events. Repeats of
the same event (same object, type, reason and message, from the same component) are folded into one Event
whose `count` and `lastTimestamp` grow, as client-go's event correlator does, so a reconcile loop that reports
the same thing every minute does not flood the namespace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pyop.client.dynamic import DynamicClient
from pyop.client.errors import ApiConnectionError, ApiError, NotFoundError
from pyop.client.resources import BUILTIN
from pyop.controller.objects import KubeObject, api_version_of, kind_of, meta_get

__all__ = ["EventBroadcaster", "EventRecorder", "EventType"]

log = logging.getLogger("pyop.events")

EventType = Literal["Normal", "Warning"]
EVENTS = BUILTIN["v1/Event"]
MAX_MESSAGE_BYTES = 1024  # client-go truncates event messages to this size.
_CORRELATION_CACHE_SIZE = 4096


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _truncate(message: str) -> str:
    encoded = message.encode()
    if len(encoded) <= MAX_MESSAGE_BYTES:
        return message
    return encoded[: MAX_MESSAGE_BYTES - 3].decode(errors="ignore") + "..."


@dataclass(frozen=True)
class _Pending:
    component: str
    involved: dict[str, Any]
    type: str
    reason: str
    message: str
    at: datetime


@dataclass
class _Recorded:
    name: str
    namespace: str
    count: int
    first: str


class EventRecorder:
    """Records events for one component (the controller's name shows as the event's source)."""

    def __init__(self, broadcaster: EventBroadcaster, component: str) -> None:
        self._broadcaster = broadcaster
        self.component = component

    def event(self, obj: KubeObject, type: EventType, reason: str, message: str) -> None:  # noqa: A002
        """Queue an event about `obj` (a model or a dict read from the API server); never blocks or raises."""
        if type not in ("Normal", "Warning"):
            raise ValueError(f"event type must be Normal or Warning, not {type!r}")
        involved = {
            "apiVersion": api_version_of(obj),
            "kind": kind_of(obj),
            "name": meta_get(obj, "name"),
            "namespace": meta_get(obj, "namespace"),
            "uid": meta_get(obj, "uid"),
            "resourceVersion": meta_get(obj, "resourceVersion"),
        }
        involved = {key: value for key, value in involved.items() if value}
        self._broadcaster.submit(
            _Pending(self.component, involved, type, reason, _truncate(message), self._broadcaster.clock())
        )

    def normal(self, obj: KubeObject, reason: str, message: str) -> None:
        self.event(obj, "Normal", reason, message)

    def warning(self, obj: KubeObject, reason: str, message: str) -> None:
        self.event(obj, "Warning", reason, message)


class EventBroadcaster:
    """Writes recorded events with one background task; `start` it in a running loop, `stop` at shutdown.

    Events recorded before `start` wait in the buffer. When more than `max_queued` wait, new ones are
    dropped (and counted in `dropped`), as client-go does, rather than growing memory without bound.
    """

    def __init__(
        self,
        client: DynamicClient,
        *,
        clock: Callable[[], datetime] = _utc_now,
        max_queued: int = 1000,
        host: str | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.max_queued = max_queued
        self.host = host if host is not None else socket.gethostname()
        self.dropped = 0
        self.written = 0
        self._pending: deque[_Pending] = deque()
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._recorded: OrderedDict[tuple[Any, ...], _Recorded] = OrderedDict()
        self._task: asyncio.Task[None] | None = None

    def recorder(self, component: str) -> EventRecorder:
        return EventRecorder(self, component)

    def submit(self, pending: _Pending) -> None:
        if len(self._pending) >= self.max_queued:
            self.dropped += 1
            return
        self._pending.append(pending)
        self._idle.clear()
        self._wakeup.set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="event broadcaster")

    async def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued event is written (or failed); False if `timeout` passed first."""
        try:
            async with asyncio.timeout(timeout):
                await self._idle.wait()
        except TimeoutError:
            return False
        return True

    async def stop(self, timeout: float = 5.0) -> None:
        """Write what is queued (for at most `timeout` seconds), then end the task."""
        if self._task is None:
            return
        await self.flush(timeout)
        task, self._task = self._task, None
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _run(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._pending:
                pending = self._pending.popleft()
                try:
                    await self._write(pending)
                    self.written += 1
                except asyncio.CancelledError:
                    raise
                except (ApiError, ApiConnectionError) as error:
                    log.warning("could not write event %s/%s: %s", pending.type, pending.reason, error)
                except Exception:
                    log.exception("could not write event %s/%s", pending.type, pending.reason)
            self._idle.set()

    async def _write(self, pending: _Pending) -> None:
        involved = pending.involved
        key = (
            pending.component,
            involved.get("uid") or (involved.get("kind"), involved.get("namespace"), involved.get("name")),
            pending.type,
            pending.reason,
            pending.message,
        )
        seen = self._recorded.get(key)
        if seen is not None:
            seen.count += 1
            try:
                await self.client.patch(
                    EVENTS,
                    seen.name,
                    {"count": seen.count, "lastTimestamp": _time(pending.at)},
                    seen.namespace,
                )
                self._recorded.move_to_end(key)
                return
            except NotFoundError:
                del self._recorded[key]  # Expired or deleted: start a new Event.
        namespace = involved.get("namespace") or "default"
        name = f"{involved.get('name', 'unknown')}.{time.time_ns():x}"
        timestamp = _time(pending.at)
        await self.client.create(
            EVENTS,
            {
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": involved,
                "reason": pending.reason,
                "message": pending.message,
                "type": pending.type,
                "source": {"component": pending.component, "host": self.host},
                "firstTimestamp": timestamp,
                "lastTimestamp": timestamp,
                "count": 1,
                "reportingComponent": pending.component,
                "reportingInstance": self.host,
            },
        )
        self._recorded[key] = _Recorded(name, namespace, 1, timestamp)
        if len(self._recorded) > _CORRELATION_CACHE_SIZE:
            self._recorded.popitem(last=False)
