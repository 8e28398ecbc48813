"""kube-apiserver's CEL cost budget for a CRD: per rule and per schema, in its words, plus which bound to add.

A rule's cost is its estimated maximum (`cel_check`) times how often it may run: the product of the maxItems and
maxProperties of every list and map above it, or, when one of them is unbounded, as many values of the rule's
node as fit into one request (3 MiB over the node's smallest serialized size plus one). Over 10,000,000 the rule
is refused (``StaticEstimatedCostLimit``); a messageExpression is held to the same limit without the
multiplication; all of a schema's rules and messageExpressions together may cost 100,000,000
(``StaticEstimatedCRDCostLimit``), and when they exceed it the (up to four) rules contributing at least 1% each
are named, most expensive first.

The API server only says where bounds could go ("adding maxItems, maxProperties, and maxLength where arrays,
maps, and strings are declared"). The refusal made here says which: every unbounded list, map or string the
estimate had to assume the largest size for, as ``add maxItems to spec.items``. The error text stays the API
server's (the test server answers with it); the advice is carried beside it (`BudgetError.hint`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pyop.schema.errors import FORBIDDEN, FieldError
from pyop_scaffold.manifests.acceptance.cel_decl import MAX_REQUEST_SIZE_BYTES

STATIC_ESTIMATED_COST_LIMIT: Final = 10_000_000
STATIC_ESTIMATED_CRD_COST_LIMIT: Final = 100_000_000
MAX_U64: Final = (1 << 64) - 1
_MOST_EXPENSIVE: Final = 4

_MARKERS: Final = {
    "maxItems": "+kubebuilder:validation:MaxItems",
    "maxProperties": "+kubebuilder:validation:MaxProperties",
    "maxLength": "+kubebuilder:validation:MaxLength",
}


@dataclass(frozen=True)
class BudgetError(FieldError):
    """A cost refusal, rendered exactly as the API server's; `hint` names the bounds that would lower it."""

    hint: str = ""


def cost_message(cost_name: str, cost: int, limit: int) -> str:
    """apiextensions' getCostErrorMessage."""
    factor = float(cost) / float(limit)
    if factor > 100.0:
        shown = "more than 100x"
    elif factor < 1.5:
        shown = f"{factor:f}x"
    else:
        shown = f"{factor:.1f}x"
    return (
        f"{cost_name} exceeds budget by factor of {shown} (try simplifying the rule, or adding maxItems, "
        "maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )


def fallback_cardinality(min_serialized_size: int) -> int:
    """How many values of a node fit into one request, when the lists and maps above it are not all bounded."""
    return MAX_REQUEST_SIZE_BYTES // (min_serialized_size + 1)


def times(cost: int, cardinality: int) -> int:
    """apiextensions' multiplyWithOverflowGuard."""
    if cost == 0:
        return 0
    return min(cost * cardinality, MAX_U64)


def hint_text(bounds: tuple[tuple[str, str], ...]) -> str:
    """``add maxItems to spec.items (+kubebuilder:validation:MaxItems), ...`` for the bounds, in order."""
    parts = []
    for keyword, place in bounds:
        marker = _MARKERS.get(keyword)
        where = place or "the schema root"
        parts.append(f"add {keyword} to {where}" + (f" ({marker})" if marker else ""))
    return ", ".join(parts)


def rule_budget_error(path: str, cost_name: str, cost: int, bounds: tuple[tuple[str, str], ...]) -> FieldError | None:
    """The refusal of one rule (or messageExpression) whose cost is over the per-expression limit, else None."""
    if cost <= STATIC_ESTIMATED_COST_LIMIT:
        return None
    return BudgetError(
        FORBIDDEN, path, cost_message(cost_name, cost, STATIC_ESTIMATED_COST_LIMIT), hint=hint_text(bounds)
    )


@dataclass
class Ledger:
    """The costs of one schema's rules and messageExpressions, in walk order: (path, cost, bounds)."""

    entries: list[tuple[str, int, tuple[tuple[str, str], ...]]]

    def observe(self, path: str, cost: int, bounds: tuple[tuple[str, str], ...]) -> None:
        self.entries.append((path, cost, bounds))

    def errors(self, schema_path: str) -> list[FieldError]:
        """The API server's errors for a schema whose total is over the per-CRD limit (else none)."""
        total = 0
        for _, cost, _ in self.entries:
            total = min(total + cost, MAX_U64)
        if total <= STATIC_ESTIMATED_CRD_COST_LIMIT:
            return []
        expensive = [entry for entry in self.entries if entry[1] >= STATIC_ESTIMATED_CRD_COST_LIMIT // 100]
        expensive.sort(key=lambda entry: entry[1], reverse=True)
        errors: list[FieldError] = [
            BudgetError(
                FORBIDDEN,
                path,
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
                hint=hint_text(bounds),
            )
            for path, _, bounds in expensive[:_MOST_EXPENSIVE]
        ]
        every_bound: dict[tuple[str, str], None] = {}
        for _, _, bounds in expensive[:_MOST_EXPENSIVE]:
            for bound in bounds:
                every_bound.setdefault(bound, None)
        errors.append(
            BudgetError(
                FORBIDDEN,
                schema_path,
                cost_message(
                    "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                    total,
                    STATIC_ESTIMATED_CRD_COST_LIMIT,
                ),
                hint=hint_text(tuple(every_bound)),
            )
        )
        return errors
