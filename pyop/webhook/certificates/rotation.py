"""When to replace the CA and the serving certificate, so that no webhook call ever meets an untrusted certificate.

kubebuilder #5253 is an outage from rotating a CA and its leaf at once: replicas served the new leaf before the API
servers trusted the new CA (or the reverse). Here every step changes one side only, and the next step waits an
``overlap`` long enough for every replica (``sync_interval``) and every API server (a configuration update) to
have caught up:

1. ``stable``: one CA trusted, the served certificate signed by it. A serving certificate in its last
   ``renew_fraction`` of life (a third, cert-manager's default ``renewBefore``), or one that does not cover the
   hosts, is replaced by a new one from the same CA: the bundle is unchanged, so both are trusted.
2. The CA in its last ``renew_fraction``: a new CA is made and trusted *next to* the old one (``ca-overlap``);
   the old serving certificate stays in service.
3. After ``overlap``: a serving certificate from the new CA (``leaf-overlap``); both CAs still trusted, so
   replicas serving the old certificate meanwhile are fine.
4. After ``overlap`` again: the old CA is dropped (``stable``).

``plan`` is a pure function of the state and the clock; ``runtime.py`` stores the state in a Secret and injects the
bundle (trust is always added before it is used and removed only after it is unused).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from pyop.webhook.certificates.authority import (
    KeyPair,
    issued_by,
    new_ca,
    new_serving_certificate,
    not_after,
    subject_hosts,
)

__all__ = ["CA_OVERLAP", "LEAF_OVERLAP", "STABLE", "CertificateState", "RotationPolicy", "plan"]

STABLE = "stable"
CA_OVERLAP = "ca-overlap"
LEAF_OVERLAP = "leaf-overlap"
PHASES = (STABLE, CA_OVERLAP, LEAF_OVERLAP)


@dataclass(frozen=True, slots=True)
class RotationPolicy:
    """Lifetimes: a CA for a year, serving certificates for 90 days (cert-manager's default), each renewed in its
    last third; ``overlap`` between the steps of a CA rotation (much longer than the replicas' sync interval)."""

    ca_validity: timedelta = timedelta(days=365)
    serving_validity: timedelta = timedelta(days=90)
    renew_fraction: float = 1 / 3
    overlap: timedelta = timedelta(minutes=10)

    def __post_init__(self) -> None:
        if not 0 < self.renew_fraction < 1:
            raise ValueError(f"renew_fraction {self.renew_fraction} must be between 0 and 1")
        if self.overlap * 2 >= self.ca_validity * self.renew_fraction:
            raise ValueError("the CA's renewal window must be longer than two overlaps")

    def renew_at(self, expires: datetime, validity: timedelta) -> datetime:
        return expires - validity * self.renew_fraction


@dataclass(frozen=True, slots=True)
class CertificateState:
    """What the Secret holds: the trusted CAs (signing CA first), the signing CA's key, the served pair."""

    trusted: tuple[bytes, ...]
    ca_key: bytes
    serving: KeyPair
    phase: str = STABLE
    changed_at: datetime | None = None  # when the phase began

    @property
    def bundle(self) -> bytes:
        """The caBundle to inject: every trusted CA."""
        return b"".join(self.trusted)

    @property
    def signing_ca(self) -> KeyPair:
        return KeyPair(self.trusted[0], self.ca_key)


def bootstrap(common_name: str, hosts: Sequence[str], now: datetime, policy: RotationPolicy) -> CertificateState:
    ca = new_ca(common_name, now, policy.ca_validity)
    serving = new_serving_certificate(ca, hosts, now, policy.serving_validity)
    return CertificateState((ca.certificate,), ca.key, serving, STABLE, now)


def plan(
    state: CertificateState | None,
    *,
    common_name: str,
    hosts: Sequence[str],
    now: datetime,
    policy: RotationPolicy,
) -> CertificateState | None:
    """The next state, or None when nothing is due."""
    if state is None or not state.trusted or state.phase not in PHASES:
        return bootstrap(common_name, hosts, now, policy)
    since = state.changed_at or now
    if state.phase == CA_OVERLAP:
        if now - since < policy.overlap:
            return None
        serving = new_serving_certificate(state.signing_ca, hosts, now, policy.serving_validity)
        return replace(state, serving=serving, phase=LEAF_OVERLAP, changed_at=now)
    if state.phase == LEAF_OVERLAP:
        if now - since < policy.overlap:
            return None
        return replace(state, trusted=state.trusted[:1], phase=STABLE, changed_at=now)
    ca_expires = not_after(state.trusted[0])
    if now >= policy.renew_at(ca_expires, policy.ca_validity):
        ca = new_ca(common_name, now, policy.ca_validity)
        return CertificateState((ca.certificate, *state.trusted), ca.key, state.serving, CA_OVERLAP, now)
    if _serving_due(state, hosts, now, policy):
        serving = new_serving_certificate(state.signing_ca, hosts, now, policy.serving_validity)
        return replace(state, serving=serving, changed_at=now)
    return None


def _serving_due(state: CertificateState, hosts: Sequence[str], now: datetime, policy: RotationPolicy) -> bool:
    certificate = state.serving.certificate
    if not issued_by(certificate, state.trusted[0]):
        return True
    if not set(hosts) <= set(subject_hosts(certificate)):
        return True
    return now >= policy.renew_at(not_after(certificate), policy.serving_validity)
