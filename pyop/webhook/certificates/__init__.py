"""Self-managed serving certificates (``--certificates=pyop``): a CA and a serving certificate in a Secret, rotated
with an overlap, injected into the operator's webhook configurations and CRDs (or an aggregated API server's
APIServices), served by every replica. See ``rotation.py`` for the schedule and ``runtime.py`` for the moving
parts."""

from pyop.webhook.certificates.rotation import CertificateState, RotationPolicy, plan
from pyop.webhook.certificates.runtime import (
    CertificateSettings,
    InjectionTargets,
    ReplicaSync,
    Rotator,
    ServedFiles,
    certificates_from_environment,
    setup_certificates,
)

__all__ = [
    "CertificateSettings",
    "CertificateState",
    "InjectionTargets",
    "ReplicaSync",
    "RotationPolicy",
    "Rotator",
    "ServedFiles",
    "certificates_from_environment",
    "plan",
    "setup_certificates",
]
