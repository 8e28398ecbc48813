"""The delegating authorizer's cache key (pyop.apiserver.authorization.delegating.review_key) stands for the whole
SubjectAccessReview: attributes with equal keys ask the same review, and through the cache every decision is the
cluster's answer to the review of that very question (Hypothesis: random questions of users with groups, uid and
extra, resource and non-resource, against a reviewer that answers each spec and counts them)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.apiserver.authentication.delegating import DelegatedUser
from pyop.apiserver.authorization.attributes import Attributes
from pyop.apiserver.authorization.delegating import DelegatingAuthorizer, review_key, subject_access_review_spec

_USERS = st.builds(
    DelegatedUser,
    username=st.sampled_from(["alice", "bob", ""]),
    groups=st.lists(st.sampled_from(["devs", "ops", "system:authenticated"]), max_size=2),
    uid=st.sampled_from(["", "u1"]),
    extra=st.dictionaries(
        st.sampled_from(["scopes", "team"]), st.lists(st.sampled_from(["a", "b"]), max_size=2), max_size=2
    ),
)
_ATTRIBUTES = st.builds(
    Attributes,
    user=_USERS,
    verb=st.sampled_from(["get", "list", "patch"]),
    resource_request=st.booleans(),
    api_group=st.sampled_from(["", "wardle.example.com"]),
    api_version=st.sampled_from(["v1", "v1beta1"]),
    resource=st.sampled_from(["flunders", "fischers"]),
    subresource=st.sampled_from(["", "status"]),
    namespace=st.sampled_from(["", "default"]),
    name=st.sampled_from(["", "x"]),
    path=st.sampled_from(["", "/healthz", "/metrics"]),
)


@settings(max_examples=400, deadline=None)
@given(first=_ATTRIBUTES, second=_ATTRIBUTES)
def test_equal_keys_ask_the_same_review(first: Attributes, second: Attributes) -> None:
    if review_key(first) == review_key(second):
        assert subject_access_review_spec(first) == subject_access_review_spec(second)


class _Cluster:
    """Answers a review from its spec alone (allowed when the JSON's hash is even), counting the reviews."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    @staticmethod
    def answer(spec: dict[str, Any]) -> bool:
        return len(json.dumps(spec, sort_keys=True)) % 2 == 0

    async def review_access(self, spec: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(spec)
        return {"allowed": self.answer(spec), "reason": "by length"}


@settings(max_examples=150, deadline=None)
@given(questions=st.lists(_ATTRIBUTES, min_size=1, max_size=12))
def test_every_cached_decision_is_the_answer_to_its_own_review(questions: list[Attributes]) -> None:
    cluster = _Cluster()
    authorizer = DelegatingAuthorizer(cluster, clock=lambda: 0.0)
    for attributes in questions:
        decision = asyncio.run(authorizer.decide(attributes))
        assert decision.allowed == _Cluster.answer(subject_access_review_spec(attributes))
    distinct = {json.dumps(subject_access_review_spec(a), sort_keys=True) for a in questions}
    assert len(cluster.asked) <= len({review_key(a) for a in questions})
    assert len(cluster.asked) >= len(distinct)
