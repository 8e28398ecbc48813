"""The request deadline kube-apiserver puts on a request before kube-aggregator proxies it.

kube-apiserver's filters (``WithRequestDeadline``, ``WithTimeoutForNonLongRunningRequests``) give every request that
is not long-running ``--request-timeout`` (60 s), shortened by its ``timeout`` query parameter (a Go duration; one
that does not parse is a 400); a request still unanswered then is a 504 ``Timeout`` Status. Long-running requests
are never cut: watches (``?watch=true`` or a ``/watch/`` path) and the ``proxy``, ``attach``, ``exec``, ``log`` and
``portforward`` subresources (``BasicLongRunningRequestCheck``), as kube-apiserver's RequestInfo resolves the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyop.api.status import ApiError
from pyop.apiserver.server.flags import parse_duration

REQUEST_TIMEOUT = 60.0  # seconds: kube-apiserver's --request-timeout default
LONG_RUNNING_VERBS = frozenset({"watch", "proxy"})
LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})
INVALID_TIMEOUT = "invalid timeout specified in the request URL"
TIMED_OUT = "Timeout: request did not complete within requested timeout - context deadline exceeded"


def long_running(path: str, query: Mapping[str, str]) -> bool:
    """Whether kube-apiserver treats the request for ``path`` (``/apis/<group>/<version>/...``) as long-running."""
    parts = [part for part in path.split("/") if part]
    rest = parts[3:] if len(parts) >= 3 and parts[0] == "apis" else []
    if rest and rest[0] in LONG_RUNNING_VERBS:
        return True
    watch = query.get("watch")
    if watch is not None and watch.lower() not in ("false", "0"):
        return True
    if len(rest) >= 2 and rest[0] == "namespaces":
        rest = rest[2:]  # a namespaced resource (``namespaces/<name>`` alone is the Namespace itself)
    return len(rest) >= 3 and rest[2] in LONG_RUNNING_SUBRESOURCES


def request_deadline(query: Mapping[str, str], maximum: float) -> float:
    """Seconds the request may take: its ``timeout`` parameter, at most (and when not positive) ``maximum``;
    ApiError 400 when the parameter is not a Go duration."""
    value = query.get("timeout", "")
    if not value:
        return maximum
    try:
        seconds = parse_duration(value)
    except ValueError as error:
        raise ApiError(400, f"{INVALID_TIMEOUT} - {error}") from None
    return maximum if seconds <= 0 or seconds > maximum else seconds


def timeout_status() -> dict[str, Any]:
    """apierrors.NewTimeoutError(..., 0) as kube-apiserver's timeout filter writes it (``details`` present, empty)."""
    return {**ApiError(504, TIMED_OUT, reason="Timeout").to_status(), "details": {}}


__all__ = ["REQUEST_TIMEOUT", "long_running", "request_deadline", "timeout_status"]
