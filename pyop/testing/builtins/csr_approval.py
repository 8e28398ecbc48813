"""A CertificateSigningRequest's `approval` and `status` subresources and the CertificateApproval admission plugin,
as kube-apiserver serves them (pkg/registry/certificates/certificates/strategy.go: csrApprovalStrategy and
csrStatusStrategy; pkg/apis/certificates/validation; plugin/pkg/admission/certificates/approval).

- `approval` (`kubectl certificate approve|deny`): only `status.conditions` is taken from the request, each condition
  without a `lastUpdateTime` gets the time of the write and one without a `lastTransitionTime` that of the old
  condition of the same type and status (else now). Validation: Approved and Denied are mutually exclusive,
  Approved, Denied and Failed may only be `True`, condition types are set and unique, and no Approved, Denied or
  Failed condition may be removed.
- `status` (a signer's write): the spec and the Approved/Denied conditions stay as stored; adding or changing an
  approval there is refused ("updates may not add a condition of type ..."), and an issued certificate cannot be
  replaced.
- A plain update keeps the spec (the CSR is immutable but through its subresources); the registry keeps status.
- CertificateApproval (pyop.testing.admission.certificate_approval): a write to `approval` needs `approve` on the
  signer.

The request itself (PEM block, PKCS#10, signature) is checked on create (csr_request), an issued certificate when
it changes (csr_certificate).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from pyop.api.status import StatusCause
from pyop.apiserver.registry.strategy import RegistryContext, SubresourceStrategy
from pyop.testing.builtins.csr_certificate import certificate_problems

CSR_KEY: Final = "certificatesigningrequests.certificates.k8s.io"
GROUP: Final = "certificates.k8s.io"
APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
_TRUE_ONLY: Final = (APPROVED, DENIED, FAILED)
_CONDITIONS: Final = "status.conditions"


def _conditions(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list((obj.get("status") or {}).get("conditions") or [])


def _of_type(conditions: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [c for c in conditions if c.get("type") == kind]


def _timestamped(conditions: list[dict[str, Any]], old: list[dict[str, Any]], now: str) -> list[dict[str, Any]]:
    """populateConditionTimestamps: lastUpdateTime now when missing; lastTransitionTime the old one of the same
    type and status, else now."""
    stamped = []
    for condition in conditions:
        condition = dict(condition)
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            condition["lastTransitionTime"] = next(
                (
                    c["lastTransitionTime"]
                    for c in old
                    if c.get("type") == condition.get("type")
                    and c.get("status") == condition.get("status")
                    and c.get("lastTransitionTime")
                ),
                now,
            )
        stamped.append(condition)
    return stamped


def _with_conditions(base: dict[str, Any], metadata: dict[str, Any], conditions: list[dict[str, Any]]) -> Any:
    result = dict(base)
    result["metadata"] = metadata  # the CSR strategies leave metadata to the request (no ResetObjectMetaForStatus)
    status = dict(base.get("status") or {})
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)
    result["status"] = status
    return result


class ApprovalStrategy:
    """csrApprovalStrategy: the update keeps `status.conditions` only."""

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> dict[str, Any]:
        conditions = _timestamped(_conditions(new), _conditions(old), ctx.now())
        return _with_conditions(old, dict(new.get("metadata") or {}), conditions)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[StatusCause]:
        return _validate_update(new, old, approval=True)


class StatusStrategy:
    """csrStatusStrategy: the spec and the Approved/Denied conditions stay as stored."""

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> dict[str, Any]:
        result = dict(new)
        result["spec"] = old.get("spec")
        conditions = _conditions(new)
        old_conditions = _conditions(old)
        for kind in (APPROVED, DENIED):  # preserveConditionInstances: only while none is added or removed
            new_indices = [i for i, c in enumerate(conditions) if c.get("type") == kind]
            old_ones = _of_type(old_conditions, kind)
            if len(new_indices) == len(old_ones):
                for index, kept in zip(new_indices, old_ones, strict=True):
                    conditions[index] = kept
        stamped = _timestamped(conditions, old_conditions, ctx.now())
        return _with_conditions(result, dict(new.get("metadata") or {}), stamped)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[StatusCause]:
        return _validate_update(new, old, approval=False)


SUBRESOURCES: Final[dict[str, SubresourceStrategy]] = {"approval": ApprovalStrategy(), "status": StatusStrategy()}


def _validate_update(new: dict[str, Any], old: dict[str, Any], *, approval: bool) -> list[StatusCause]:
    """validateCertificateSigningRequestUpdate's condition and certificate rules, with the tolerances kube keeps
    for what the stored object already has (both Approved and Denied, duplicate or empty types)."""
    new_conditions, old_conditions = _conditions(new), _conditions(old)
    causes = list(_condition_problems(new_conditions, old_conditions))
    causes += certificate_problems(new.get("status") or {}, old.get("status") or {})  # validateCertificate
    for kind in (APPROVED, DENIED, FAILED):
        if len(_of_type(new_conditions, kind)) < len(_of_type(old_conditions, kind)):
            causes.append(_forbidden(f"updates may not remove a condition of type {json.dumps(kind)}"))
    if not approval:
        for kind in (APPROVED, DENIED):
            old_ones, new_ones = _of_type(old_conditions, kind), _of_type(new_conditions, kind)
            if len(new_ones) > len(old_ones):
                causes.append(_forbidden(f"updates may not add a condition of type {json.dumps(kind)}"))
            elif len(new_ones) == len(old_ones) and new_ones != old_ones:
                causes.append(_forbidden(f"updates may not modify a condition of type {json.dumps(kind)}\n"))
    new_certificate = (new.get("status") or {}).get("certificate") or ""
    old_certificate = (old.get("status") or {}).get("certificate") or ""
    if new_certificate != old_certificate:
        if approval:
            causes.append(
                StatusCause(
                    "FieldValueForbidden", "Forbidden: updates may not set certificate content", "status.certificate"
                )
            )
        elif old_certificate:
            causes.append(
                StatusCause(
                    "FieldValueForbidden",
                    "Forbidden: updates may not modify existing certificate content",
                    "status.certificate",
                )
            )
    return causes


def _forbidden(detail: str) -> StatusCause:
    return StatusCause("FieldValueForbidden", f"Forbidden: {detail}", _CONDITIONS)


def _condition_problems(conditions: list[dict[str, Any]], old: list[dict[str, Any]]) -> Iterator[StatusCause]:
    """validateConditions."""
    old_types = [c.get("type") or "" for c in old]
    allow_both = APPROVED in old_types and DENIED in old_types
    allow_duplicates = len(set(old_types)) != len(old_types)
    allow_empty = "" in old_types
    seen: set[str] = set()
    has_approved = has_denied = False
    for index, condition in enumerate(conditions):
        where = f"{_CONDITIONS}[{index}]"
        kind = str(condition.get("type") or "")
        if not kind and not allow_empty:
            yield StatusCause("FieldValueRequired", "Required value", f"{where}.type")
        allowed = ("True",) if kind in _TRUE_ONLY else ("False", "True", "Unknown")
        status = condition.get("status") or ""
        if not status:
            yield StatusCause("FieldValueRequired", "Required value", f"{where}.status")
        elif status not in allowed:
            values = ", ".join(json.dumps(v) for v in allowed)
            yield StatusCause(
                "FieldValueNotSupported",
                f"Unsupported value: {json.dumps(status)}: supported values: {values}",
                f"{where}.status",
            )
        if not allow_both:
            if kind == APPROVED:
                has_approved = True
            elif kind == DENIED:
                has_denied = True
            if (kind == APPROVED and has_denied) or (kind == DENIED and has_approved):
                yield StatusCause(
                    "FieldValueInvalid",
                    f"Invalid value: {json.dumps(kind)}: Approved and Denied conditions are mutually exclusive",
                    _CONDITIONS,
                )
        if not allow_duplicates:
            if kind in seen:
                yield StatusCause("FieldValueDuplicate", f"Duplicate value: {json.dumps(kind)}", f"{where}.type")
            seen.add(kind)


__all__ = ["CSR_KEY", "GROUP", "SUBRESOURCES", "ApprovalStrategy", "StatusStrategy"]
