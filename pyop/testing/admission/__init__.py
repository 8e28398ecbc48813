"""kube-apiserver's compiled-in admission plugins that change or refuse Pods, in kube's order.

- `service_account`: ServiceAccount (the default account, its existence, the API access token volume).
- `default_toleration_seconds`: DefaultTolerationSeconds (not-ready/unreachable tolerations for 300 s).
- `priority`: Priority (`spec.priority` from the PriorityClass, 0 without one).
"""

from __future__ import annotations

from pyop.apiserver.admission.plugins import MutatingPlugin
from pyop.testing.admission.default_toleration_seconds import DefaultTolerationSeconds
from pyop.testing.admission.priority import Priority
from pyop.testing.admission.service_account import ServiceAccountAdmission


def kube_admission_plugins() -> tuple[MutatingPlugin, ...]:
    """The plugins in the order kube-apiserver's recommended plugin list runs them."""
    return (ServiceAccountAdmission(), DefaultTolerationSeconds(), Priority())


__all__ = ["kube_admission_plugins"]
