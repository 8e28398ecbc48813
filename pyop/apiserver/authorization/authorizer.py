"""The authorizer a server plugs in: k8s.io/apiserver's `authorizer.Authorizer`, at the request stage.

The server hands the stage the parsed request (user, target, verb) rather than ready-made `Attributes`, so that an
authorizer with a fast path (the test API server's system:masters) decides before building them; `AttributesAuthorizer`
adapts an authorizer that decides on `Attributes` (a delegating SubjectAccessReview authorizer).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from aiohttp import web

from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.authorization.attributes import Attributes, path_attributes, resource_attributes
from pyop.apiserver.endpoints.routing import DiscoveryPath, Target


class Authorizer(Protocol):
    async def authorize(
        self, user: UserInfo, request: web.BaseRequest, target: Target | DiscoveryPath | None, verb: str
    ) -> None:
        """Nothing when allowed; raises the 403 (`attributes.forbidden`) when not."""
        ...


class AlwaysAllow:
    """kube-apiserver's `--authorization-mode=AlwaysAllow`."""

    async def authorize(
        self, user: UserInfo, request: web.BaseRequest, target: Target | DiscoveryPath | None, verb: str
    ) -> None:
        return None


class AttributesAuthorizer:
    """Builds the request's `Attributes` (resource or non-resource) and awaits ``decide`` on them."""

    def __init__(self, decide: Callable[[Attributes], Awaitable[None]]) -> None:
        self.decide = decide

    async def authorize(
        self, user: UserInfo, request: web.BaseRequest, target: Target | DiscoveryPath | None, verb: str
    ) -> None:
        if isinstance(target, Target):
            attributes = resource_attributes(user, target, verb, request.query)
        else:
            attributes = path_attributes(user, request.method, request.path)
        await self.decide(attributes)


__all__ = ["AlwaysAllow", "AttributesAuthorizer", "Authorizer"]
