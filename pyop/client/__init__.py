"""pyop's Kubernetes API client (the role of client-go's rest, dynamic and typed clients).

Layers, bottom up: `Transport` (aiohttp, auth, errors, retries, watch streams), `DynamicClient` (every verb on
dict objects, `RESTMapper` for kind -> resource through discovery), `Client` (the same verbs with pydantic
models). Configuration comes from `load_config` (kubeconfig or in-cluster, via kubernetes_asyncio's loader)::

    async with await connect(context="kind-dev") as client:
        captain = await client.get(Captain, "blackbeard", "ships")
"""

from __future__ import annotations

import os
from typing import Any

from pyop.api.paths import InvalidPathSegment
from pyop.client.config import AuthProvider, ClientConfig, StaticToken
from pyop.client.discovery import RESTMapper
from pyop.client.dynamic import (
    DynamicClient,
    EventType,
    ObjectList,
    PatchType,
    Preconditions,
    WatchEvent,
)
from pyop.client.errors import (
    AlreadyExistsError,
    ApiConnectionError,
    ApiError,
    BadRequestError,
    ClientError,
    ConflictError,
    ForbiddenError,
    GoneError,
    InternalServerError,
    InvalidError,
    MethodNotAllowedError,
    NoKindMatchError,
    NotFoundError,
    ResponseLimitError,
    ServerError,
    ServerTimeoutError,
    ServiceUnavailableError,
    StatusCause,
    TooManyRequestsError,
    UnauthorizedError,
    UnsupportedMediaTypeError,
)
from pyop.client.kubeconfig import ConfigError, load_config, load_in_cluster_config
from pyop.client.resources import BUILTIN, APIResource, ResourceInfoLike, register_model, resource_for_model
from pyop.client.selectors import LabelSelector
from pyop.client.transport import Transport
from pyop.client.typed import Client, DataLossWarning, Scale


async def connect(
    kubeconfig: str | os.PathLike[str] | dict[str, Any] | None = None,
    context: str | None = None,
    **transport_options: Any,
) -> Client:
    """A typed client for the configuration `load_config` finds; close it (or `async with`) when done."""
    config = await load_config(kubeconfig, context)
    return Client(Transport(config, **transport_options))


__all__ = [
    "BUILTIN",
    "APIResource",
    "AlreadyExistsError",
    "ApiConnectionError",
    "ApiError",
    "AuthProvider",
    "BadRequestError",
    "Client",
    "ClientConfig",
    "ClientError",
    "ConfigError",
    "ConflictError",
    "DataLossWarning",
    "DynamicClient",
    "EventType",
    "ForbiddenError",
    "GoneError",
    "InternalServerError",
    "InvalidPathSegment",
    "InvalidError",
    "LabelSelector",
    "MethodNotAllowedError",
    "NoKindMatchError",
    "NotFoundError",
    "ObjectList",
    "PatchType",
    "Preconditions",
    "RESTMapper",
    "ResourceInfoLike",
    "ResponseLimitError",
    "Scale",
    "ServerError",
    "ServerTimeoutError",
    "ServiceUnavailableError",
    "StaticToken",
    "StatusCause",
    "TooManyRequestsError",
    "Transport",
    "UnauthorizedError",
    "UnsupportedMediaTypeError",
    "WatchEvent",
    "connect",
    "load_config",
    "load_in_cluster_config",
    "register_model",
    "resource_for_model",
]
