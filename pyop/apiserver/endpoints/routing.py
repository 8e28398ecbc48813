"""Parse a Kubernetes REST path into what it addresses, and name the request's verb.

``/api/v1/namespaces/ns/pods/p/status`` -> group "", version v1, namespace ns, resource pods,
name p, subresource status. Namespaces themselves are the one resource whose item path looks
like a namespace prefix, so ``/api/v1/namespaces/x/status`` is the namespace's status.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pyop.api.paths import path_segment_problems
from pyop.api.status import ApiError, bad_request

_NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(frozen=True, slots=True)
class Target:
    group: str
    version: str
    plural: str
    namespace: str | None
    name: str
    subresource: str


@dataclass(frozen=True, slots=True)
class DiscoveryPath:
    """``/api``, ``/api/v1``, ``/apis``, ``/apis/g``, ``/apis/g/v``; group/version None when absent."""

    legacy: bool
    group: str | None
    version: str | None


def _not_found() -> ApiError:
    return ApiError(404, "the server could not find the requested resource")


@lru_cache(maxsize=8192)
def parse_path(path: str) -> Target | DiscoveryPath | None:
    """None for paths outside the API (health, version). Cached: clients address the same objects
    again and again, and the results are immutable."""
    parts = [part for part in path.split("/") if part]
    if not parts or parts[0] not in ("api", "apis"):
        return None
    if parts[0] == "api":
        if len(parts) == 1:
            return DiscoveryPath(True, "", None)
        group, version, rest = "", parts[1], parts[2:]
        if version != "v1":
            raise _not_found()
        if not rest:
            return DiscoveryPath(True, "", version)
    else:
        if len(parts) <= 3:
            return DiscoveryPath(False, parts[1] if len(parts) > 1 else None, parts[2] if len(parts) > 2 else None)
        group, version, rest = parts[1], parts[2], parts[3:]
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in _NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3 and rest[2] != "proxy":  # a proxy's own path follows its subresource (`pods/x/proxy/a/b`)
        raise _not_found()
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    for what, segment in (("namespace", namespace), ("resource name", name), ("subresource", subresource)):
        # The segments arrive percent-decoded: a client that sent `a%25b` or `%2e%2e` is refused here as
        # pyop's client refuses it before sending (the same check, pyop.api.paths).
        problems = path_segment_problems(segment) if segment else []
        if problems:
            raise bad_request(f"invalid {what} {segment!r}: {'; '.join(problems)}")
    return Target(group, version, plural, namespace, name, subresource)


def verb_of(method: str, target: Target, watch: bool) -> str:
    if method == "GET":
        if watch and target.subresource != "proxy":  # a proxied query is the backend's
            return "watch"
        return "get" if target.name else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if target.name else "deletecollection"
    if target.subresource == "proxy":  # RequestInfoFactory: HEAD is a get, any other method no verb
        return "get" if method == "HEAD" else ""
    return method.lower()
