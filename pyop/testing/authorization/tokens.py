"""The ServiceAccount `token` subresource (TokenRequest, `kubectl create token`): a token that authenticates as the
ServiceAccount, answered as kube-apiserver's serviceaccount token REST storage answers.

The token is an opaque random string rather than a signed JWT (the server knows its tokens; nothing here verifies
signatures), bound to the account's uid: deleting the account revokes it. `spec.audiences` defaults to the API
server's audience and `spec.expirationSeconds` to 3600, at least 600 as validation requires; the expiry is
reported but not enforced.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from pyop.api.status import StatusCause, bad_request, invalid, not_found
from pyop.testing.authorization.authorizer import service_account_user

API_AUDIENCE: Final = "https://kubernetes.default.svc.cluster.local"
DEFAULT_EXPIRATION: Final = 3600
MIN_EXPIRATION: Final = 600


def token_request(operations: Any, namespace: str, name: str, body: Any) -> dict[str, Any]:
    """The answered TokenRequest (201); 404 when the ServiceAccount does not exist, 422 for a too short expiry."""
    if body is not None and not isinstance(body, dict):
        raise bad_request("the request body must be a TokenRequest object")
    request = dict(body or {})
    account = operations.store.get("serviceaccounts", namespace, name)
    if account is None:
        raise not_found("serviceaccounts", "", name)
    spec = dict(request.get("spec") or {})
    expiration = spec.get("expirationSeconds") or DEFAULT_EXPIRATION
    if not isinstance(expiration, int) or expiration < MIN_EXPIRATION:
        raise invalid(
            "TokenRequest",
            "authentication.k8s.io",
            name,
            [
                StatusCause(
                    "FieldValueInvalid",
                    f"Invalid value: {expiration}: may not specify a duration less than 10 minutes",
                    "spec.expirationSeconds",
                )
            ],
        )
    spec["audiences"] = list(spec.get("audiences") or [API_AUDIENCE])
    spec["expirationSeconds"] = expiration
    spec.setdefault("boundObjectRef", None)
    token = secrets.token_urlsafe(32)
    uid = account["metadata"].get("uid", "")
    operations.users[token] = service_account_user(namespace, name, uid)
    now = datetime.now(UTC).replace(microsecond=0)
    expires = (now + timedelta(seconds=expiration)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": operations.now()},
        "spec": spec,
        "status": {"token": token, "expirationTimestamp": expires},
    }
