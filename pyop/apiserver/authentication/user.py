"""Who a request comes from, once authenticated: k8s.io/apiserver/pkg/authentication/user.Info.

Every stage after authentication (authorization attributes, admission reviews, field managers, the review APIs)
reads this one type, whatever authenticator produced it (a token table, request-header certificates, TokenReview).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class UserInfo:
    username: str
    groups: list[str] = field(default_factory=list)
    uid: str = ""


__all__ = ["UserInfo"]
