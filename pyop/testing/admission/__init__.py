"""kube-apiserver's compiled-in admission plugins that change or refuse Pods, in kube's order.

- `limit_ranger`: LimitRanger (container defaults from LimitRanges; min/max/ratio checked when validating).
- `service_account`: ServiceAccount (the default account, its existence, the API access token volume).
- `priority`: Priority (`spec.priority` from the PriorityClass, 0 without one).
- `default_toleration_seconds`: DefaultTolerationSeconds (not-ready/unreachable tolerations for 300 s).
Validating, after the kinds' own validation:
- `limit_ranger`: LimitRanger's checks;
- `pod_security`: PodSecurity (the namespace's Pod Security Standard: refusals, warnings, label checks);
- `certificate_approval`: CertificateApproval: `approve` on the CSR's signer for `approval` writes;
- `resource_quota`: ResourceQuota (usage against the namespace's quotas), after the validating webhooks.
"""

from __future__ import annotations

from pyop.apiserver.admission.plugins import MutatingPlugin, ValidatingPlugin
from pyop.testing.admission.certificate_approval import ApproveCheck, CertificateApproval
from pyop.testing.admission.default_toleration_seconds import DefaultTolerationSeconds
from pyop.testing.admission.limit_ranger import LimitRangerMutation, LimitRangerValidation
from pyop.testing.admission.pod_security import PodSecurity
from pyop.testing.admission.priority import Priority
from pyop.testing.admission.resource_quota import ResourceQuotaAdmission
from pyop.testing.admission.service_account import ServiceAccountAdmission


def kube_admission_plugins() -> tuple[MutatingPlugin, ...]:
    """The plugins in the order kube-apiserver's recommended plugin list runs them."""
    return (LimitRangerMutation(), ServiceAccountAdmission(), Priority(), DefaultTolerationSeconds())


def kube_validating_plugins(may_approve: ApproveCheck | None = None) -> tuple[ValidatingPlugin, ...]:
    """The validating ones, in kube-apiserver's order (ResourceQuota last, after the webhooks); ``may_approve``:
    the authorizer's answer CertificateApproval asks (certificate_approval.rbac_approve_check), none: not run."""
    approval: tuple[ValidatingPlugin, ...] = (CertificateApproval(may_approve),) if may_approve is not None else ()
    return (LimitRangerValidation(), PodSecurity(), *approval, ResourceQuotaAdmission())


__all__ = ["kube_admission_plugins", "kube_validating_plugins"]
