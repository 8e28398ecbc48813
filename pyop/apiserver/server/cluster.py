"""The cluster's API as an aggregated API server uses it, through pyop's own client: TokenReviews,
SubjectAccessReviews, the extension-apiserver-authentication ConfigMap, namespaces.

``--authentication-kubeconfig`` and ``--authorization-kubeconfig`` name where to send the reviews (default: the
pod's in-cluster configuration); ``--kubeconfig`` the core API (default: the authentication one).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pyop.apiserver.authentication.delegating import RequestHeaderConfig
from pyop.apiserver.authentication.x509 import CertificateBundle
from pyop.client import ApiError, ClientConfig, DynamicClient, NotFoundError, Transport, load_config
from pyop.client.resources import APIResource

TOKEN_REVIEWS = APIResource("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", namespaced=False)
SUBJECT_ACCESS_REVIEWS = APIResource(
    "authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", namespaced=False
)
CONFIG_MAPS = APIResource("", "v1", "ConfigMap", "configmaps", namespaced=True)
NAMESPACES = APIResource("", "v1", "Namespace", "namespaces", namespaced=False)
AUTHENTICATION_CONFIG_MAP = ("kube-system", "extension-apiserver-authentication")


async def client_config(kubeconfig: str) -> ClientConfig:
    """A kubeconfig file's settings; for ``""`` pyop's usual search (`pyop.client.load_config`: $KUBECONFIG, the
    pod's in-cluster configuration, ~/.kube/config)."""
    return await load_config(kubeconfig or None)


# Told each review's answer: ("authn" | "authz", the HTTP code, or "<error>" when the cluster was not reached).
ReviewObserver = Callable[[str, str], None]


class ClusterClient:
    """One pyop client of the cluster, answering the server's delegated questions."""

    def __init__(self, config: ClientConfig, observe: ReviewObserver | None = None) -> None:
        self.config = config
        self.client = DynamicClient(Transport(config))
        self.observe = observe

    async def close(self) -> None:
        await self.client.transport.close()

    async def _review(self, what: str, resource: APIResource, spec: dict[str, Any]) -> dict[str, Any]:
        try:
            review = await self.client.create(resource, {"spec": spec})
        except ApiError as error:
            self._observed(what, str(error.code))
            raise
        except Exception:
            self._observed(what, "<error>")
            raise
        self._observed(what, "201")
        status: dict[str, Any] = review.get("status") or {}
        return status

    def _observed(self, what: str, code: str) -> None:
        if self.observe is not None:
            self.observe(what, code)

    async def review_token(self, token: str, audiences: Sequence[str]) -> dict[str, Any]:
        spec: dict[str, Any] = {"token": token}
        if audiences:
            spec["audiences"] = list(audiences)
        return await self._review("authn", TOKEN_REVIEWS, spec)

    async def review_access(self, spec: dict[str, Any]) -> dict[str, Any]:
        return await self._review("authz", SUBJECT_ACCESS_REVIEWS, spec)

    async def authentication_config_map(self) -> dict[str, str] | None:
        """The data of kube-system/extension-apiserver-authentication; None when there is none."""
        namespace, name = AUTHENTICATION_CONFIG_MAP
        try:
            config_map = await self.client.get(CONFIG_MAPS, name, namespace)
        except NotFoundError:
            return None
        data: dict[str, str] = config_map.get("data") or {}
        return data

    async def namespace_exists(self, name: str) -> bool:
        try:
            await self.client.get(NAMESPACES, name)
        except NotFoundError:
            return False
        return True


def _json_list(data: dict[str, str], key: str) -> list[str] | None:
    raw = data.get(key)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        raise ValueError(
            f"{'/'.join(AUTHENTICATION_CONFIG_MAP)}: {key} is not a JSON list of strings: {raw!r}"
        ) from None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{'/'.join(AUTHENTICATION_CONFIG_MAP)}: {key} is not a JSON list of strings: {raw!r}")
    return value


def request_header_from_config_map(data: dict[str, str]) -> RequestHeaderConfig | None:
    """The request-header settings kube-apiserver publishes (None when it publishes no request-header CA)."""
    ca = data.get("requestheader-client-ca-file")
    if not ca:
        return None
    config = RequestHeaderConfig(CertificateBundle(ca.encode(), "requestheader-client-ca-file of the ConfigMap"))
    for key, attribute in (
        ("requestheader-allowed-names", "allowed_names"),
        ("requestheader-username-headers", "username_headers"),
        ("requestheader-group-headers", "group_headers"),
        ("requestheader-extra-headers-prefix", "extra_headers_prefix"),
        ("requestheader-uid-headers", "uid_headers"),
    ):
        value = _json_list(data, key)
        if value is not None:
            setattr(config, attribute, value)
    return config


def client_ca_from_config_map(data: dict[str, str]) -> CertificateBundle | None:
    ca = data.get("client-ca-file")
    return CertificateBundle(ca.encode(), "client-ca-file of the ConfigMap") if ca else None


__all__ = [
    "ClusterClient",
    "ReviewObserver",
    "client_ca_from_config_map",
    "client_config",
    "request_header_from_config_map",
]
