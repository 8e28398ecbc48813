"""kube's CertificateApproval admission plugin (plugin/pkg/admission/certificates/approval): a write to
`certificatesigningrequests/approval` needs the `approve` verb on the synthetic `signers` resource of
certificates.k8s.io named after the stored CSR's signerName, or `<domain>/*` (IsAuthorizedForSignerName); else a
403 naming the CSR, "user not permitted to approve requests with signerName ...".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pyop.apiserver.admission.plugins import UPDATE, Attributes
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.storage.store import Store
from pyop.testing.admission.forbidden import admission_forbidden
from pyop.testing.builtins.csr_approval import CSR_KEY, GROUP

# (user, signer name or `<domain>/*`) -> whether the authorizer allows `approve` on that `signers` name.
ApproveCheck = Callable[[UserInfo, str], bool]


class CertificateApproval:
    """kube's CertificateApproval plugin: `approve` on `signers` for the stored CSR's signerName (or its domain's
    wildcard) before a write to `certificatesigningrequests/approval`."""

    name = "CertificateApproval"
    last = False

    def __init__(self, may_approve: ApproveCheck) -> None:
        self.may_approve = may_approve

    def may_handle(self, operation: str, resource_type: ResourceType, subresource: str) -> bool:
        return operation == UPDATE and subresource == "approval" and resource_type.storage_key == CSR_KEY

    def handles(self, attributes: Attributes) -> bool:
        return self.may_handle(attributes.operation, attributes.resource_type, attributes.subresource)

    def validate(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None:
        user = attributes.user
        if user is None:  # the server's own writes
            return
        signer = str(((attributes.old or {}).get("spec") or {}).get("signerName") or "")
        if self.may_approve(user, signer) or self.may_approve(user, signer.split("/")[0] + "/*"):
            return
        raise admission_forbidden(
            attributes, obj, f"user not permitted to approve requests with signerName {json.dumps(signer)}"
        )


def rbac_approve_check(authorization: Any) -> ApproveCheck:
    """The server's authorizer asked as IsAuthorizedForSignerName asks it: verb `approve`, resource `signers` of
    certificates.k8s.io at any version, named after the signer (``authorization``: pyop.testing.authorization's)."""
    from pyop.apiserver.authorization.attributes import Attributes as Request  # the authorizer's, not admission's

    def may_approve(user: UserInfo, name: str) -> bool:
        request = Request(user, "approve", True, api_group=GROUP, api_version="*", resource="signers", name=name)
        return bool(authorization.decide(request).allowed)

    return may_approve


__all__ = ["ApproveCheck", "CertificateApproval", "rbac_approve_check"]
