"""What an authorizer is asked about a request: kube-apiserver's `authorizer.Attributes`, and its 403.

A request for a resource names a verb, API group, resource (with subresource), namespace and name; any other
path (discovery documents, /version, /openapi) is a non-resource request whose verb is the HTTP method in lower
case. Built as k8s.io/apiserver's RequestInfoFactory builds them: a Namespace's own path counts as in that
namespace, and a list or watch narrowed by `metadata.name=` counts as naming that object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyop.api.status import ApiError, qualified
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.endpoints.routing import Target


@dataclass(frozen=True, slots=True)
class Attributes:
    user: UserInfo
    verb: str
    resource_request: bool
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""

    @property
    def combined_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def resource_attributes(user: UserInfo, target: Target, verb: str, query: Any) -> Attributes:
    namespace = target.namespace or ""
    name = target.name
    if target.plural == "namespaces" and target.group == "" and name:
        namespace = name  # RequestInfoFactory: /api/v1/namespaces/x is in namespace x
    if verb in ("list", "watch") and not name:
        for requirement in (query.get("fieldSelector") or "").split(","):
            field, _, value = requirement.partition("=")
            if field.strip() == "metadata.name" and value and not value.startswith("="):
                name = value.strip()
    return Attributes(
        user=user,
        verb=verb,
        resource_request=True,
        api_group=target.group,
        api_version=target.version,
        resource=target.plural,
        subresource=target.subresource,
        namespace=namespace,
        name=name,
    )


def path_attributes(user: UserInfo, method: str, path: str) -> Attributes:
    return Attributes(user=user, verb=method.lower(), resource_request=False, path=path)


def forbidden(attributes: Attributes, reason: str = "") -> ApiError:
    """The 403 kube-apiserver writes (responsewriters.Forbidden + apierrors.NewForbidden), message for message."""
    username = attributes.user.username
    if not attributes.resource_request:
        message = f'User "{username}" cannot {attributes.verb} path "{attributes.path}"'
    elif attributes.namespace:
        message = (
            f'User "{username}" cannot {attributes.verb} resource "{attributes.combined_resource}" in API group '
            f'"{attributes.api_group}" in the namespace "{attributes.namespace}"'
        )
    else:
        message = (
            f'User "{username}" cannot {attributes.verb} resource "{attributes.combined_resource}" in API group '
            f'"{attributes.api_group}" at the cluster scope'
        )
    if reason:
        message = f"{message}: {reason}"
    if not attributes.resource_request:
        return ApiError(403, f"forbidden: {message}", reason="Forbidden")
    resource = qualified(attributes.resource, attributes.api_group)
    prefix = f'{resource} "{attributes.name}"' if attributes.name else resource
    return ApiError(
        403,
        f"{prefix} is forbidden: {message}",
        reason="Forbidden",
        name=attributes.name,
        group=attributes.api_group,
        kind=attributes.resource,
    )
