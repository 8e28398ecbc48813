"""Who may read `/metrics`: the caller's bearer token checked by the API server (TokenReview), then the
permission `get` on the non-resource URL checked by it too (SubjectAccessReview).

controller-runtime's `filters.WithAuthenticationAndAuthorization`, which replaced kube-rbac-proxy in Kubebuilder
projects: Prometheus' service account needs a ClusterRole with `nonResourceURLs: ["/metrics"], verbs: ["get"]`
(the scaffolded `metrics-reader` role), and the manager's own service account may create TokenReviews and
SubjectAccessReviews (`metrics-auth-role`). Answers are cached as controller-runtime's delegating
authenticator and authorizer cache them, so a scrape every 15 s costs the API server nothing after the first.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from pyop.client.dynamic import DynamicClient
from pyop.client.errors import ApiConnectionError, ApiError
from pyop.client.resources import APIResource

__all__ = ["AUTHENTICATION_TTL", "AUTHORIZATION_ALLOW_TTL", "AUTHORIZATION_DENY_TTL", "KubernetesAuth", "UserInfo"]

log = logging.getLogger("pyop.manager.metrics")

TOKEN_REVIEWS = APIResource("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", namespaced=False)
SUBJECT_ACCESS_REVIEWS = APIResource(
    "authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", namespaced=False
)

AUTHENTICATION_TTL = 60.0
AUTHORIZATION_ALLOW_TTL = 300.0
AUTHORIZATION_DENY_TTL = 30.0
_CACHE_SIZE = 1024

# How kube-apiserver names the verb of a non-resource request.
_VERBS = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass(frozen=True)
class UserInfo:
    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict, hash=False, compare=False)


class _TTLCache:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._entries: OrderedDict[Any, tuple[float, Any]] = OrderedDict()

    def get(self, key: Any) -> tuple[bool, Any]:
        entry = self._entries.get(key)
        if entry is None:
            return False, None
        expires, value = entry
        if expires <= self._clock():
            del self._entries[key]
            return False, None
        return True, value

    def put(self, key: Any, value: Any, ttl: float) -> None:
        self._entries[key] = (self._clock() + ttl, value)
        self._entries.move_to_end(key)
        while len(self._entries) > _CACHE_SIZE:
            self._entries.popitem(last=False)


class KubernetesAuth:
    """Authenticates and authorises HTTP requests with the API server's reviews; an aiohttp middleware."""

    def __init__(self, client: DynamicClient, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self._tokens = _TTLCache(clock)
        self._decisions = _TTLCache(clock)
        self.reviews = 0

    async def authenticate(self, token: str) -> UserInfo | None:
        found, user = self._tokens.get(token)
        if found:
            return user  # type: ignore[no-any-return]
        self.reviews += 1
        review = await self.client.create(
            TOKEN_REVIEWS,
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}},
        )
        status = review.get("status") or {}
        user = None
        if status.get("authenticated"):
            raw = status.get("user") or {}
            user = UserInfo(
                username=str(raw.get("username", "")),
                uid=str(raw.get("uid", "")),
                groups=tuple(raw.get("groups") or ()),
                extra=dict(raw.get("extra") or {}),
            )
        self._tokens.put(token, user, AUTHENTICATION_TTL)
        return user

    async def authorize(self, user: UserInfo, path: str, verb: str) -> bool:
        key = (user.username, user.uid, user.groups, path, verb)
        found, allowed = self._decisions.get(key)
        if found:
            return bool(allowed)
        self.reviews += 1
        spec: dict[str, Any] = {
            "user": user.username,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = user.extra
        review = await self.client.create(
            SUBJECT_ACCESS_REVIEWS,
            {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec},
        )
        allowed = bool((review.get("status") or {}).get("allowed"))
        self._decisions.put(key, allowed, AUTHORIZATION_ALLOW_TTL if allowed else AUTHORIZATION_DENY_TTL)
        return allowed

    @web.middleware
    async def middleware(self, request: web.Request, handler: Callable[[web.Request], Any]) -> web.StreamResponse:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return web.Response(text="Unauthorized\n", status=401)
        try:
            user = await self.authenticate(token.strip())
            if user is None:
                return web.Response(text="Unauthorized\n", status=401)
            verb = _VERBS.get(request.method, request.method.lower())
            if not await self.authorize(user, request.path, verb):
                return web.Response(text=f"Authorization denied for user {user.username}\n", status=403)
        except (ApiError, ApiConnectionError) as error:
            log.error("metrics authentication/authorization failed: %s", error)
            return web.Response(text="Internal Server Error\n", status=500)
        response: web.StreamResponse = await handler(request)
        return response
