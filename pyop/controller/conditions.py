"""Status conditions with Kubernetes semantics (apimachinery's `meta.SetStatusCondition` and friends).

`lastTransitionTime` records when the *status* last changed, so it moves only when `status` does; reason,
message and observedGeneration are refreshed on every set. The helpers edit a `list[Condition]` in place and
return whether anything changed, so a reconciler writes the status only when needed:

    if set_status_condition(captain.status.conditions, type="Available", status="True", reason="Reconciled",
                            message="ready", observed_generation=captain.metadata.generation):
        await client.update_status(captain)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Literal

from pyop.api.model import Condition

__all__ = [
    "ConditionStatus",
    "find_status_condition",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "remove_status_condition",
    "set_status_condition",
]

ConditionStatus = Literal["True", "False", "Unknown"]
_STATUSES = ("True", "False", "Unknown")


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp(moment: datetime) -> datetime:
    """UTC, whole seconds: what the API server stores for a `metav1.Time`, so a condition set here compares
    equal to the same condition read back."""
    if moment.tzinfo is UTC:  # the default clock's: set on every new condition, so no conversion to pay for
        return moment.replace(microsecond=0)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)


def _status_text(status: ConditionStatus | bool) -> str:
    if isinstance(status, bool):
        return "True" if status else "False"
    if status not in _STATUSES:
        raise ValueError(f"condition status must be True, False or Unknown, not {status!r}")
    return status


def set_status_condition(
    conditions: list[Condition],
    *,
    type: str,  # noqa: A002 - the field's name in the API
    status: ConditionStatus | bool,
    reason: str,
    message: str = "",
    observed_generation: int | None = None,
    clock: Callable[[], datetime] = _now,
) -> bool:
    """Add or update the condition of `type`; returns whether the list changed.

    A new condition, or a change of `status`, stamps `lastTransitionTime` with `clock()`; otherwise the
    existing time stays. `status` may be a bool (`True` -> "True").
    """
    status_text = _status_text(status)
    existing = find_status_condition(conditions, type)
    if existing is None:
        conditions.append(
            Condition(
                type=type,
                status=status_text,
                reason=reason,
                message=message,
                last_transition_time=_stamp(clock()),
                observed_generation=observed_generation,
            )
        )
        return True
    changed = False
    if existing.status != status_text:
        existing.status = status_text
        existing.last_transition_time = _stamp(clock())
        changed = True
    if existing.reason != reason:
        existing.reason = reason
        changed = True
    if existing.message != message:
        existing.message = message
        changed = True
    if existing.observed_generation != observed_generation:
        existing.observed_generation = observed_generation
        changed = True
    return changed


def find_status_condition(conditions: Sequence[Condition] | None, type: str) -> Condition | None:  # noqa: A002
    return next((condition for condition in conditions or () if condition.type == type), None)


def remove_status_condition(conditions: list[Condition], type: str) -> bool:  # noqa: A002
    """Remove the condition of `type`; returns whether it was there."""
    for index, condition in enumerate(conditions):
        if condition.type == type:
            del conditions[index]
            return True
    return False


def is_status_condition_present_and_equal(
    conditions: Sequence[Condition] | None,
    type: str,  # noqa: A002
    status: ConditionStatus,
) -> bool:
    condition = find_status_condition(conditions, type)
    return condition is not None and condition.status == status


def is_status_condition_true(conditions: Sequence[Condition] | None, type: str) -> bool:  # noqa: A002
    return is_status_condition_present_and_equal(conditions, type, "True")


def is_status_condition_false(conditions: Sequence[Condition] | None, type: str) -> bool:  # noqa: A002
    return is_status_condition_present_and_equal(conditions, type, "False")
