"""`ApiHandler.resolve`'s shortcut gives the general answer: it accepts the registry's own subresources without
building the list of them (and the special subresource's key) per request. Compared with the code it replaced
(kept here as the reference) on generated targets of built-in kinds, results and errors alike."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.api.status import ApiError
from pyop.apiserver.endpoints.handlers import ApiHandler
from pyop.apiserver.endpoints.routing import Target
from pyop.apiserver.registry.resources import ResourceType
from pyop.testing import TestAPIServer


def _outcome(call: Any) -> tuple[str, Any]:
    try:
        return "value", call()
    except ApiError as error:
        return "error", (error.code, str(error))


def _reference_resolve(handler: ApiHandler, target: Target) -> ResourceType:
    """ApiHandler.resolve as of b8c9b2a."""
    resource_type = handler.resources.lookup(target.group, target.version, target.plural)
    if target.namespace is not None and not resource_type.namespaced:
        raise ApiError(404, "the server could not find the requested resource")
    if target.subresource == "status" and not resource_type.has_status:
        raise ApiError(404, "the server could not find the requested resource")
    if target.subresource == "scale" and resource_type.scale is None:
        raise ApiError(404, "the server could not find the requested resource")
    if target.subresource == "token" and not (resource_type.token and "token" in handler.subresource_creates):
        raise ApiError(404, "the server could not find the requested resource")
    special = f"{resource_type.storage_key}/{target.subresource}"
    registry_subresources = ("", "status", "scale", "finalize", "token", *resource_type.update_subresources)
    if target.subresource not in registry_subresources and not (
        special in handler.subresource_creates
        or special in handler.subresource_gets
        or special in handler.subresource_connects
    ):
        raise ApiError(404, "the server could not find the requested resource")
    return resource_type


@pytest.fixture(scope="module")
def handler() -> ApiHandler:
    return TestAPIServer(tls=False).handler


_ENDPOINTS = [
    ("", "v1", "pods"),
    ("", "v1", "namespaces"),
    ("", "v1", "serviceaccounts"),
    ("", "v1", "nodes"),
    ("", "v1", "services"),
    ("apps", "v1", "deployments"),
    ("certificates.k8s.io", "v1", "certificatesigningrequests"),
    ("", "v1", "replicationcontrollers"),
    ("", "v1", "nosuchthings"),
]
_SUBRESOURCES = [
    "",
    "status",
    "scale",
    "finalize",
    "token",
    "ephemeralcontainers",
    "resize",
    "approval",
    "eviction",
    "binding",
    "log",
    "exec",
    "attach",
    "portforward",
    "proxy",
    "other",
]


@settings(max_examples=400, deadline=None)
@given(
    endpoint=st.sampled_from(_ENDPOINTS),
    namespace=st.sampled_from([None, "default"]),
    name=st.sampled_from(["", "x"]),
    subresource=st.sampled_from(_SUBRESOURCES),
)
def test_resolve_answers_as_before(
    handler: ApiHandler, endpoint: tuple[str, str, str], namespace: str | None, name: str, subresource: str
) -> None:
    target = Target(*endpoint, namespace, name, subresource)
    assert _outcome(lambda: handler.resolve(target)) == _outcome(lambda: _reference_resolve(handler, target))
