"""Who may read `/metrics`: the caller's bearer token checked by the API server (TokenReview), then the
permission `get` on the non-resource URL checked by it too (SubjectAccessReview).

controller-runtime's `filters.WithAuthenticationAndAuthorization`, which replaced kube-rbac-proxy in Kubebuilder
projects: Prometheus' service account needs a ClusterRole with `nonResourceURLs: ["/metrics"], verbs: ["get"]`
(the scaffolded `metrics-reader` role), and the manager's own service account may create TokenReviews and
SubjectAccessReviews (`metrics-auth-role`). Answers are cached as controller-runtime's delegating
authenticator and authorizer cache them, so a scrape every 15 s costs the API server nothing after the first.

Caches and floods: tokens are cached by their SHA-256 digest (the cache holds no credential), accepted and
rejected tokens in separate bounded caches (a flood of made-up tokens cannot evict Prometheus' entry), and
decisions keyed on the whole user (name, uid, groups and extra: two users differing only in `extra` may be
authorised differently). Every distinct unknown token would still cost a TokenReview, so reviews of tokens
not in either cache are rate-limited (a token bucket, `review_rate` per second with bursts of `review_burst`):
over it, the caller gets 429 with Retry-After and the API server is not asked. Concurrent requests with the
same unknown token share one review; a token longer than `MAX_TOKEN_BYTES` is refused without one.
"""

from __future__ import annotations

import asyncio
import hashlib
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

__all__ = [
    "AUTHENTICATION_DENY_TTL",
    "AUTHENTICATION_TTL",
    "AUTHORIZATION_ALLOW_TTL",
    "AUTHORIZATION_DENY_TTL",
    "MAX_TOKEN_BYTES",
    "KubernetesAuth",
    "UserInfo",
]

log = logging.getLogger("pyop.manager.metrics")

TOKEN_REVIEWS = APIResource("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", namespaced=False)
SUBJECT_ACCESS_REVIEWS = APIResource(
    "authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", namespaced=False
)

AUTHENTICATION_TTL = 60.0
AUTHENTICATION_DENY_TTL = 30.0
AUTHORIZATION_ALLOW_TTL = 300.0
AUTHORIZATION_DENY_TTL = 30.0
MAX_TOKEN_BYTES = 16 * 1024  # service-account JWTs are ~1 KiB; an OIDC token with many groups a few KiB
_CACHE_SIZE = 1024

# How kube-apiserver names the verb of a non-resource request.
_VERBS = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass(frozen=True)
class UserInfo:
    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict, hash=False, compare=False)


class ReviewsThrottled(Exception):
    """Too many unknown tokens to review right now; the caller is asked to come back later."""


class _TTLCache:
    """Entries that expire after their TTL, at most `_CACHE_SIZE` of them (the least recently stored go)."""

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

    def __init__(
        self,
        client: DynamicClient,
        *,
        clock: Callable[[], float] = time.monotonic,
        review_rate: float = 10.0,
        review_burst: int = 20,
    ) -> None:
        self.client = client
        self._clock = clock
        self._users = _TTLCache(clock)
        self._rejected = _TTLCache(clock)
        self._decisions = _TTLCache(clock)
        self._pending: dict[bytes, asyncio.Future[UserInfo | None]] = {}
        self.review_rate = review_rate
        self.review_burst = review_burst
        self._allowance = float(review_burst)
        self._allowance_at = clock()
        self.reviews = 0
        self.throttled = 0

    async def authenticate(self, token: str) -> UserInfo | None:
        """The user a token belongs to, or None when it is not valid; raises `ReviewsThrottled` when the token is
        unknown and too many unknown tokens were reviewed lately."""
        if len(token) > MAX_TOKEN_BYTES:
            return None
        digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        found, user = self._users.get(digest)
        if found:
            return user  # type: ignore[no-any-return]
        found, _ = self._rejected.get(digest)
        if found:
            return None
        pending = self._pending.get(digest)
        if pending is not None:
            return await asyncio.shield(pending)
        if not self._take_review():
            self.throttled += 1
            raise ReviewsThrottled
        future: asyncio.Future[UserInfo | None] = asyncio.get_running_loop().create_future()
        self._pending[digest] = future
        try:
            user = await self._review_token(token)
        except Exception as error:
            future.set_exception(error)
            future.exception()  # retrieved: the waiters, if any, get it too
            raise
        except BaseException:
            future.cancel()
            raise
        else:
            future.set_result(user)
        finally:
            del self._pending[digest]
        if user is None:
            self._rejected.put(digest, None, AUTHENTICATION_DENY_TTL)
        else:
            self._users.put(digest, user, AUTHENTICATION_TTL)
        return user

    def _take_review(self) -> bool:
        """One review from the token bucket, if one is left."""
        now = self._clock()
        self._allowance = min(float(self.review_burst), self._allowance + (now - self._allowance_at) * self.review_rate)
        self._allowance_at = now
        if self._allowance < 1.0:
            return False
        self._allowance -= 1.0
        return True

    async def _review_token(self, token: str) -> UserInfo | None:
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
        return user

    async def authorize(self, user: UserInfo, path: str, verb: str) -> bool:
        extra = tuple(sorted((name, tuple(values)) for name, values in user.extra.items()))
        key = (user.username, user.uid, user.groups, extra, path, verb)
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
            try:
                user = await self.authenticate(token.strip())
            except ReviewsThrottled:
                return web.Response(text="Too Many Requests\n", status=429, headers={"Retry-After": "1"})
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
