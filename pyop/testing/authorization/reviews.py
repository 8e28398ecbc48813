"""The review APIs, answered and never stored, from the same users and rules the request path uses.

authentication.k8s.io: TokenReview (which user a token is), SelfSubjectReview (who am I).
authorization.k8s.io: SubjectAccessReview (may this user ...), LocalSubjectAccessReview (the same, in the
review's namespace), SelfSubjectAccessReview (may I ...), SelfSubjectRulesReview (what may I do in a namespace).
Decisions come from `Authorization.decide` (system:masters, then RBAC) exactly as a request's do, with the
status fields kube-apiserver's review handlers set (`allowed`, `reason`; `resourceRules`, `nonResourceRules`,
`incomplete`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pyop.api.status import ApiError, StatusCause, bad_request, invalid
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.authorization.attributes import Attributes
from pyop.apiserver.registry.resources import ResourceType

if TYPE_CHECKING:
    from pyop.testing.authorization.authorizer import Authorization

REVIEWS = frozenset(
    {
        "tokenreviews",
        "selfsubjectreviews",
        "subjectaccessreviews",
        "localsubjectaccessreviews",
        "selfsubjectaccessreviews",
        "selfsubjectrulesreviews",
    }
)


def user_info(user: UserInfo) -> dict[str, Any]:
    info: dict[str, Any] = {"username": user.username, "groups": list(user.groups)}
    if user.uid:
        info["uid"] = user.uid
    return info


def _spec_causes(spec: dict[str, Any], *, needs_subject: bool) -> list[StatusCause]:
    """ValidateSubjectAccessReviewSpec (and its Self/Local variants): which attributes, and whom."""
    causes = []
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        causes.append(
            StatusCause(
                "FieldValueInvalid",
                f"Invalid value: {json.dumps(non_resource)}: cannot be specified in combination with "
                "resourceAttributes",
                "spec.nonResourceAttributes",
            )
        )
    if resource is None and non_resource is None:
        causes.append(
            StatusCause(
                "FieldValueInvalid",
                'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
                "spec.resourceAttributes",
            )
        )
    if needs_subject and not spec.get("user") and not spec.get("groups"):
        causes.append(
            StatusCause(
                "FieldValueInvalid", 'Invalid value: "": at least one of user or group must be specified', "spec.user"
            )
        )
    return causes


def _attributes(kind: str, user: UserInfo, spec: dict[str, Any], *, needs_subject: bool = False) -> Attributes:
    causes = _spec_causes(spec, needs_subject=needs_subject)
    if causes:
        raise invalid(kind, "authorization.k8s.io", "", causes)
    resource: dict[str, Any] = spec.get("resourceAttributes") or {}
    non_resource = spec.get("nonResourceAttributes")
    if non_resource is not None:
        return Attributes(
            user=user, verb=non_resource.get("verb", ""), resource_request=False, path=non_resource.get("path", "")
        )
    return Attributes(
        user=user,
        verb=resource.get("verb", ""),
        resource_request=True,
        api_group=resource.get("group", ""),
        api_version=resource.get("version", ""),
        resource=resource.get("resource", ""),
        subresource=resource.get("subresource", ""),
        namespace=resource.get("namespace", ""),
        name=resource.get("name", ""),
    )


def _access_status(authorization: Authorization, attributes: Attributes) -> dict[str, Any]:
    decision = authorization.decide(attributes)
    status: dict[str, Any] = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    return status


def answer(
    authorization: Authorization,
    resource_type: ResourceType,
    namespace: str,
    obj: dict[str, Any],
    requester: UserInfo | None,
) -> dict[str, Any]:
    """The review with its status filled in (the response body of the create)."""
    spec = obj.get("spec") or {}
    plural = resource_type.plural
    if plural == "tokenreviews":
        user = authorization.users.get(spec.get("token") or "")
        if user is None:
            obj["status"] = {"authenticated": False, "error": "invalid bearer token"}
        else:
            obj["status"] = {"authenticated": True, "user": user_info(user), "audiences": spec.get("audiences") or []}
        return obj
    if requester is None:  # in-process callers (no HTTP request): the admin
        requester = UserInfo("system:admin", ["system:masters", "system:authenticated"])
    if plural == "selfsubjectreviews":
        obj["status"] = {"userInfo": user_info(requester)}
        return obj
    if plural == "selfsubjectrulesreviews":
        obj["status"] = authorization.rules_review(requester, spec.get("namespace", ""))
        return obj
    if plural == "selfsubjectaccessreviews":
        obj["status"] = _access_status(authorization, _attributes(resource_type.kind, requester, spec))
        return obj
    if plural in ("subjectaccessreviews", "localsubjectaccessreviews"):
        subject = UserInfo(spec.get("user") or "", list(spec.get("groups") or []), spec.get("uid") or "")
        attributes = _attributes(resource_type.kind, subject, spec, needs_subject=True)
        if plural == "localsubjectaccessreviews" and attributes.namespace != namespace:
            raise bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
        obj["status"] = _access_status(authorization, attributes)
        return obj
    raise ApiError(405, "the server does not allow this method on the requested resource")
