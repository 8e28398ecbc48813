"""The authenticator a server plugs in, and the bearer-token table the test API server uses.

k8s.io/apiserver's `authenticator.Request`: given a request, who sent it, or a 401. The stage is asynchronous so
that authenticators that ask another server (TokenReview) fit the same slot as a dictionary lookup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from aiohttp import web

from pyop.api.status import ApiError
from pyop.apiserver.authentication.user import UserInfo


class Authenticator(Protocol):
    async def authenticate(self, request: web.BaseRequest) -> UserInfo:
        """The request's user; raises ``ApiError(401)`` when the request proves nobody acceptable."""
        ...


class TokenAuthenticator:
    """Bearer tokens looked up in a table (``users``, shared and updated by the server: new tokens count at once)."""

    def __init__(self, users: Mapping[str, UserInfo]) -> None:
        self.users = users

    async def authenticate(self, request: web.BaseRequest) -> UserInfo:
        header = request.headers.get("Authorization", "")
        user = self.users.get(header[7:].strip()) if header.startswith("Bearer ") else None
        if user is None:
            raise ApiError(401, "Unauthorized")
        return user


__all__ = ["Authenticator", "TokenAuthenticator"]
