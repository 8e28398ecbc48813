"""The metrics endpoint's authenticator and authoriser caches: rejected tokens are cached (bounded, with a TTL)
apart from accepted ones, unknown tokens cannot flood the API server with TokenReviews, and decisions are keyed
on the whole user, `extra` included."""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

import aiohttp
import pytest
from mgr_helpers import manager_for

from pyop.client.dynamic import DynamicClient
from pyop.manager.metrics_auth import (
    AUTHENTICATION_DENY_TTL,
    AUTHENTICATION_TTL,
    MAX_TOKEN_BYTES,
    KubernetesAuth,
    UserInfo,
)
from pyop.manager.metrics_auth import ReviewsThrottled as Throttled
from pyop.testing import TestAPIServer


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Reviews:
    """Stands in for the DynamicClient: answers TokenReviews from `tokens`, SubjectAccessReviews from `allow`."""

    def __init__(self, tokens: dict[str, dict[str, Any]], allow: Any = None, delay: float = 0.0) -> None:
        self.tokens = tokens
        self.allow = allow or (lambda spec: True)
        self.delay = delay
        self.sent: list[dict[str, Any]] = []

    async def create(self, resource: Any, body: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(body)
        if self.delay:
            await asyncio.sleep(self.delay)
        if body["kind"] == "TokenReview":
            user = self.tokens.get(body["spec"]["token"])
            return {"status": {"authenticated": True, "user": user} if user else {"authenticated": False}}
        return {"status": {"allowed": bool(self.allow(body["spec"]))}}

    def count(self, kind: str) -> int:
        return sum(1 for body in self.sent if body["kind"] == kind)


def auth_for(reviews: Reviews, clock: Clock, **options: Any) -> KubernetesAuth:
    return KubernetesAuth(cast(DynamicClient, reviews), clock=clock, **options)


async def test_rejected_tokens_are_cached_until_their_ttl() -> None:
    clock, reviews = Clock(), Reviews({})
    auth = auth_for(reviews, clock)
    assert await auth.authenticate("bad") is None
    assert await auth.authenticate("bad") is None
    assert reviews.count("TokenReview") == 1
    clock.now += AUTHENTICATION_DENY_TTL + 1
    assert await auth.authenticate("bad") is None
    assert reviews.count("TokenReview") == 2


async def test_a_flood_of_unknown_tokens_costs_a_bounded_number_of_reviews() -> None:
    clock, reviews = Clock(), Reviews({"prometheus": {"username": "system:serviceaccount:monitoring:prometheus"}})
    auth = auth_for(reviews, clock, review_rate=10.0, review_burst=20)
    assert await auth.authenticate("prometheus") is not None
    throttled = 0
    for index in range(1000):
        try:
            await auth.authenticate(f"made-up-{index}")
        except Throttled:
            throttled += 1
    assert reviews.count("TokenReview") == 20  # the burst, then nothing until the bucket refills
    assert throttled == 981 and auth.throttled == 981
    # The scraper's cached entry survived the flood: no review, no throttling.
    assert (await auth.authenticate("prometheus")) is not None and reviews.count("TokenReview") == 20
    clock.now += 1.0  # one second refills ten reviews
    for index in range(10):
        await auth.authenticate(f"later-{index}")
    with pytest.raises(Throttled):
        await auth.authenticate("one-too-many")
    assert reviews.count("TokenReview") == 30


async def test_accepted_tokens_are_cached_by_digest_and_expire() -> None:
    clock, reviews = Clock(), Reviews({"good": {"username": "alice"}})
    auth = auth_for(reviews, clock)
    assert await auth.authenticate("good") == UserInfo("alice")
    assert "good" not in repr(auth._users._entries)  # noqa: SLF001 - the cache holds digests, not credentials
    clock.now += AUTHENTICATION_TTL - 1
    await auth.authenticate("good")
    assert reviews.count("TokenReview") == 1
    clock.now += 2
    await auth.authenticate("good")
    assert reviews.count("TokenReview") == 2


async def test_concurrent_requests_with_one_unknown_token_share_one_review() -> None:
    clock, reviews = Clock(), Reviews({"good": {"username": "alice"}}, delay=0.05)
    auth = auth_for(reviews, clock)
    users = await asyncio.gather(*(auth.authenticate("good") for _ in range(50)))
    assert users == [UserInfo("alice")] * 50
    assert reviews.count("TokenReview") == 1


async def test_an_oversized_token_is_refused_without_a_review() -> None:
    clock, reviews = Clock(), Reviews({})
    auth = auth_for(reviews, clock)
    assert await auth.authenticate("x" * (MAX_TOKEN_BYTES + 1)) is None
    assert reviews.sent == []


async def test_decisions_are_keyed_on_the_whole_user_extra_included() -> None:
    clock = Clock()
    reviews = Reviews({}, allow=lambda spec: spec.get("extra", {}).get("scopes") == ["metrics"])
    auth = auth_for(reviews, clock)
    scoped = UserInfo("bob", "u1", ("g",), {"scopes": ["metrics"]})
    unscoped = UserInfo("bob", "u1", ("g",), {"scopes": ["other"]})
    assert await auth.authorize(scoped, "/metrics", "get") is True
    assert await auth.authorize(unscoped, "/metrics", "get") is False  # not the scoped user's cached answer
    assert await auth.authorize(UserInfo("bob", "u1", ("g",), {"scopes": ["metrics"]}), "/metrics", "get") is True
    assert reviews.count("SubjectAccessReview") == 2


async def test_the_metrics_endpoint_answers_a_flood_with_429_and_keeps_serving_the_scraper(
    server: TestAPIServer,
) -> None:
    manager = manager_for(server, metrics_bind_address="127.0.0.1:0")
    async with manager, aiohttp.ClientSession() as session:
        assert manager.metrics_server is not None
        url = f"{manager.metrics_server.url}/metrics"

        async def status(token: str) -> int:
            async with session.get(url, headers={"Authorization": f"Bearer {token}"}, ssl=False) as response:
                return response.status

        assert await status(server.token) == 200
        server.reset_requests()
        started = time.monotonic()
        statuses = [await status(f"made-up-{index}") for index in range(60)]
        elapsed = time.monotonic() - started
        reviews = server.count_requests(resource="tokenreviews")
        assert statuses.count(401) == reviews and statuses.count(429) == 60 - reviews
        # The burst (20, one spent on the scraper's token) plus what the bucket refilled meanwhile (10 per second).
        assert 19 <= reviews <= 19 + 10 * elapsed + 1
        assert await status(server.token) == 200
