"""Delegated authentication of an aggregated API server (k8s.io/apiserver's DelegatingAuthenticatorConfig).

Who a request comes from, tried in kube's order:

1. **Request header**: the TLS client certificate was issued by the request-header CA (and names one of the allowed
   names, when any are configured): the user is what the front proxy (kube-aggregator) put in the username, group,
   extra and uid headers. The same headers from anyone else are ignored.
2. **Client certificate**: issued by the --client-ca-file CA: the user is its CN, the groups its O values.
3. **Bearer token**: sent back to the cluster as a TokenReview (authentication.k8s.io/v1), the answer cached for
   --authentication-token-webhook-cache-ttl (kube's cached token authenticator, by a hash of the token).
4. **Anonymous** (when enabled): ``system:anonymous`` in ``system:unauthenticated``, then authorized like anyone.

As k8s.io/apiserver's union authenticator: the first authenticator that knows the user wins; one that fails (a
client certificate that does not chain to its CA, a request-header certificate with a name not allowed, a token the
cluster rejects) only counts when none succeeds, and then the request is a 401, never anonymous (anonymous is
``NewFailOnError(union, anonymous)``). So a certificate of an unknown CA with a valid bearer token is the token's
user, and without one a 401. The handshake lets any certificate through (Go's ``tls.RequestClientCert``,
`pyop.apiserver.server.tls.request_client_certificates`); the chain the client sent is verified here.
"""

from __future__ import annotations

import hashlib
import logging
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiohttp import web

from pyop.api.status import ApiError
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.authentication.x509 import CertificateBundle, PeerCertificate

log = logging.getLogger("pyop.apiserver.authentication")

ANONYMOUS_USER = "system:anonymous"
UNAUTHENTICATED_GROUP = "system:unauthenticated"
AUTHENTICATED_GROUP = "system:authenticated"


@dataclass
class DelegatedUser(UserInfo):
    """The authenticated user, with the ``extra`` attributes SubjectAccessReviews carry."""

    extra: dict[str, list[str]] = field(default_factory=dict)
    authenticator: str = ""  # which authenticator said so (requestheader, x509, token, anonymous)


@dataclass(frozen=True)
class RequestCredentials:
    """What a request presents: its headers and the client certificate of its connection (DER), if any, with the
    rest of the chain the client sent."""

    headers: Mapping[str, str]
    header_values: Callable[[str], list[str]]
    peer_certificate: bytes | None
    peer_chain: tuple[bytes, ...] = ()  # DER, after the leaf: the intermediates a path may go through

    def peer(self) -> PeerCertificate | None:
        if self.peer_certificate is None:
            return None
        return PeerCertificate.from_der(self.peer_certificate, self.peer_chain)


def credentials_of(request: web.BaseRequest) -> RequestCredentials:
    """The request's headers and the client certificate chain of its TLS connection."""
    from pyop.apiserver.server.tls import peer_chain

    peer: bytes | None = None
    chain: tuple[bytes, ...] = ()
    transport = request.transport
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    if ssl_object is not None:
        peer = ssl_object.getpeercert(binary_form=True)
        if peer is not None:
            chain = tuple(peer_chain(ssl_object)[1:])
    headers = request.headers
    return RequestCredentials(headers, lambda name: list(headers.getall(name, [])), peer, chain)


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", reason="Unauthorized")


class CredentialError(Exception):
    """Credentials an authenticator recognised and refused (kube: the authenticator's error): a 401 unless another
    authenticator knows the user."""


def _subject(peer: PeerCertificate) -> str:
    return f"CN={peer.common_name}"


# --- request header -------------------------------------------------------------------------------------------


@dataclass
class RequestHeaderConfig:
    """The request-header settings: from flags, or from ConfigMap kube-system/extension-apiserver-authentication."""

    client_ca: CertificateBundle
    allowed_names: list[str] = field(default_factory=list)
    username_headers: list[str] = field(default_factory=lambda: ["X-Remote-User"])
    group_headers: list[str] = field(default_factory=lambda: ["X-Remote-Group"])
    extra_headers_prefix: list[str] = field(default_factory=lambda: ["X-Remote-Extra-"])
    uid_headers: list[str] = field(default_factory=list)


class RequestHeaderAuthenticator:
    """Trusts the identity headers of a front proxy that proves itself with a request-header client certificate."""

    name = "requestheader"

    def __init__(self, config: RequestHeaderConfig) -> None:
        self.config = config

    def authenticate(self, credentials: RequestCredentials) -> DelegatedUser | None:
        peer = credentials.peer()
        if peer is None:
            return None
        failure = self.config.client_ca.verify(peer)
        if failure:  # another CA's certificate: perhaps a client certificate, not a front proxy
            raise CredentialError(f"verifying request-header certificate {_subject(peer)} failed: {failure}")
        if self.config.allowed_names and peer.common_name not in self.config.allowed_names:
            # kube: `x509: subject with cn=... is not in the allowed list` (the CN only).
            raise CredentialError(f"x509: subject with cn={peer.common_name} is not in the allowed list")
        username = next(
            (value for header in self.config.username_headers for value in credentials.header_values(header) if value),
            "",
        )
        if not username:
            return None
        groups = [value for header in self.config.group_headers for value in credentials.header_values(header)]
        uid = next(
            (value for header in self.config.uid_headers for value in credentials.header_values(header) if value), ""
        )
        extra: dict[str, list[str]] = {}
        prefixes = [prefix.lower() for prefix in self.config.extra_headers_prefix]
        for header in credentials.headers:
            lowered = header.lower()
            for prefix in prefixes:
                if lowered.startswith(prefix) and len(lowered) > len(prefix):
                    key = urllib.parse.unquote(lowered[len(prefix) :])
                    extra.setdefault(key, []).extend(credentials.header_values(header))
                    break
        return DelegatedUser(username, groups, uid, extra=extra, authenticator=self.name)


class ClientCertificateAuthenticator:
    """--client-ca-file: a client certificate's CN is the user, its O values the groups."""

    name = "x509"

    def __init__(self, client_ca: CertificateBundle) -> None:
        self.client_ca = client_ca

    def authenticate(self, credentials: RequestCredentials) -> DelegatedUser | None:
        peer = credentials.peer()
        if peer is None:
            return None
        failure = self.client_ca.verify(peer)
        if failure:
            raise CredentialError(f"verifying certificate {_subject(peer)} failed: {failure}")
        return DelegatedUser(peer.common_name, peer.organizations, authenticator=self.name)


# --- bearer tokens ---------------------------------------------------------------------------------------------


class TokenReviewer(Protocol):
    """Creates a TokenReview in the cluster and returns its status (the pyop client does it: `ClusterReviews`)."""

    def review_token(self, token: str, audiences: Sequence[str]) -> Awaitable[dict[str, Any]]: ...


class TokenReviewAuthenticator:
    """Bearer tokens reviewed by the cluster, answers (both ways) cached by the token's SHA-256 for ``ttl``."""

    name = "token"

    def __init__(
        self,
        reviewer: TokenReviewer,
        *,
        ttl: float = 10.0,
        audiences: Sequence[str] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.reviewer = reviewer
        self.ttl = ttl
        self.audiences = list(audiences)
        self.clock = clock
        self._cache: dict[bytes, tuple[float, DelegatedUser | None]] = {}
        self.reviews = 0  # TokenReviews sent (the cache's misses)

    async def authenticate(self, token: str) -> DelegatedUser | None:
        """The user, None for an empty token; 401 when the cluster does not know the token."""
        if not token:
            return None
        key = hashlib.sha256(token.encode()).digest()
        now = self.clock()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            user = cached[1]
        else:
            self.reviews += 1
            try:
                status = await self.reviewer.review_token(token, self.audiences)
            except Exception as error:  # noqa: BLE001 - kube: a failed TokenReview is a 401, and is not cached
                log.warning("TokenReview failed: %s", error)
                raise unauthorized() from None
            user = _reviewed_user(status)
            if self.ttl > 0:
                if len(self._cache) > 4096:
                    self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
                self._cache[key] = (now + self.ttl, user)
        if user is None:
            raise unauthorized()
        return user


def _reviewed_user(status: Mapping[str, Any]) -> DelegatedUser | None:
    if not status.get("authenticated"):
        return None
    info = status.get("user") or {}
    extra = {str(k): [str(v) for v in values or []] for k, values in (info.get("extra") or {}).items()}
    return DelegatedUser(
        str(info.get("username") or ""),
        [str(g) for g in info.get("groups") or []],
        str(info.get("uid") or ""),
        extra=extra,
        authenticator=TokenReviewAuthenticator.name,
    )


# --- the union -------------------------------------------------------------------------------------------------


def _in_authenticated_group(user: DelegatedUser) -> DelegatedUser:
    if AUTHENTICATED_GROUP not in user.groups and user.username != ANONYMOUS_USER:
        user.groups = [*user.groups, AUTHENTICATED_GROUP]
    return user


class DelegatingAuthenticator:
    """The authenticators in kube's order; anonymous last when enabled, else 401 for requests without credentials."""

    def __init__(
        self,
        *,
        request_header: RequestHeaderAuthenticator | None = None,
        client_certificate: ClientCertificateAuthenticator | None = None,
        tokens: TokenReviewAuthenticator | None = None,
        anonymous: bool = True,
    ) -> None:
        self.request_header = request_header
        self.client_certificate = client_certificate
        self.tokens = tokens
        self.anonymous = anonymous

    async def authenticate(self, request: web.BaseRequest) -> DelegatedUser:
        """The request's user (the server's `Authenticator` stage), or a 401."""
        return await self.authenticate_credentials(credentials_of(request))

    async def authenticate_credentials(self, credentials: RequestCredentials) -> DelegatedUser:
        """The user; every authenticated one is in system:authenticated (kube's AuthenticatedGroupAdder)."""
        failures: list[str] = []
        for certificate_authenticator in (self.request_header, self.client_certificate):
            if certificate_authenticator is not None:
                try:
                    user = certificate_authenticator.authenticate(credentials)
                except CredentialError as error:
                    failures.append(str(error))
                    continue
                if user is not None:
                    return _in_authenticated_group(user)
        authorization = credentials.headers.get("Authorization", "")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            if self.tokens is None:
                raise unauthorized()
            user = await self.tokens.authenticate(token.strip())
            if user is not None:
                return _in_authenticated_group(user)
        if failures:
            log.warning("Unable to authenticate the request: %s", "; ".join(failures))
            raise unauthorized()
        if self.anonymous:
            return DelegatedUser(ANONYMOUS_USER, [UNAUTHENTICATED_GROUP], authenticator="anonymous")
        raise unauthorized()

    def trusted_ca_pem(self) -> bytes:
        """Every CA a client certificate may come from (the TLS layer asks for and checks against these)."""
        bundles = [a.config.client_ca for a in (self.request_header,) if a is not None]
        bundles += [a.client_ca for a in (self.client_certificate,) if a is not None]
        return b"\n".join(bundle.pem.strip() for bundle in bundles)


__all__ = [
    "ANONYMOUS_USER",
    "ClientCertificateAuthenticator",
    "CredentialError",
    "DelegatedUser",
    "DelegatingAuthenticator",
    "RequestCredentials",
    "RequestHeaderAuthenticator",
    "RequestHeaderConfig",
    "TokenReviewAuthenticator",
    "TokenReviewer",
    "credentials_of",
    "unauthorized",
]
