"""Fault injection: the failures an operator's client must survive, on demand.

Rules for ``delay`` and ``respond`` match requests by method and by a regular expression searched
in the path with its query string (so ``path_regex="watch=true"`` targets watches only).
Watch faults act on the streams open at the time of the call; streams opened afterwards are
healthy, which is what lets a client's recovery (reconnect, relist) be tested.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pyop.api.status import ApiError
from pyop.apiserver.endpoints.watch import Watcher

_MESSAGES = {
    409: "Operation cannot be fulfilled: injected conflict",
    429: "Too many requests, please try again later.",
    500: "Internal error occurred: injected fault",
    503: "The server is currently unable to handle the request (injected fault)",
}


@dataclass
class _Rule:
    method: str | None
    pattern: re.Pattern[str] | None
    remaining: int | None

    def matches(self, method: str, path_qs: str) -> bool:
        if self.remaining is not None and self.remaining <= 0:
            return False
        if self.method is not None and self.method.upper() != method.upper():
            return False
        return self.pattern is None or self.pattern.search(path_qs) is not None

    def consume(self) -> None:
        if self.remaining is not None:
            self.remaining -= 1


@dataclass
class _Delay(_Rule):
    seconds: float = 0.0


@dataclass
class _Response(_Rule):
    status: int = 500
    retry_after: int | None = None


class FaultInjector:
    def __init__(self, open_watchers: Callable[[], list[Watcher]], compact: Callable[[], None]) -> None:
        self._open_watchers = open_watchers
        self._compact = compact
        self._delays: list[_Delay] = []
        self._responses: list[_Response] = []

    @staticmethod
    def _selects(watcher: Watcher, resource: str | None) -> bool:
        if resource is None:
            return True
        resource_type = watcher.resource_type
        return resource in (resource_type.plural, resource_type.storage_key)

    def close_watches(self, resource: str | None = None) -> int:
        """End open watch streams now (``resource`` is a plural, optionally ``plural.group``)."""
        chosen = [w for w in self._open_watchers() if self._selects(w, resource) and not w.closed]
        for watcher in chosen:
            watcher.close()
        return len(chosen)

    def compact(self) -> None:
        """Drop the event history: watches from any earlier resourceVersion get 410 Expired."""
        self._compact()

    def stall_watches(self, resource: str | None = None) -> None:
        """Keep open streams open but silent: no events, no bookmarks, until closed."""
        for watcher in self._open_watchers():
            if self._selects(watcher, resource):
                watcher.stall()

    def delay(
        self,
        seconds: float,
        *,
        method: str | None = None,
        path_regex: str | None = None,
        times: int | None = None,
    ) -> None:
        """Sleep ``seconds`` before handling matching requests (``times=None``: until ``clear``)."""
        pattern = re.compile(path_regex) if path_regex else None
        self._delays.append(_Delay(method, pattern, times, seconds))

    def respond(
        self,
        status: int,
        *,
        method: str | None = None,
        path_regex: str | None = None,
        times: int | None = 1,
        retry_after: int | None = None,
    ) -> None:
        """Answer matching requests with an error Status instead of handling them."""
        pattern = re.compile(path_regex) if path_regex else None
        self._responses.append(_Response(method, pattern, times, status, retry_after))

    def clear(self) -> None:
        self._delays.clear()
        self._responses.clear()

    # --- used by the server's request handler ------------------------------------------------------

    @property
    def active(self) -> bool:
        """Whether any delay or respond rule is set (most of the time none is: skip the matching)."""
        return bool(self._delays or self._responses)

    def delay_for(self, method: str, path_qs: str) -> float:
        total = 0.0
        for rule in self._delays:
            if rule.matches(method, path_qs):
                rule.consume()
                total += rule.seconds
        return total

    def error_for(self, method: str, path_qs: str) -> ApiError | None:
        for rule in self._responses:
            if rule.matches(method, path_qs):
                rule.consume()
                retry_after = rule.retry_after
                if rule.status == 429 and retry_after is None:
                    retry_after = 1
                return ApiError(
                    rule.status,
                    _MESSAGES.get(rule.status, f"injected fault {rule.status}"),
                    retry_after=retry_after,
                )
        return None
