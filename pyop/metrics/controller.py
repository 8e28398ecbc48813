"""controller-runtime's controller metrics, with its names, help texts, labels and buckets.

Dashboards and alerts written for Go operators (`rate(controller_runtime_reconcile_errors_total[5m])`, the
Kubebuilder Grafana plugin's panels) work unchanged on pyop operators. Families live in a registry given by the
caller (one per manager), so two managers in one process, as in tests, do not share counters.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyop.metrics.fast import Family, FastCounter, FastFamilies, FastGauge, FastHistogram, families_for

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["RECONCILE_TIME_BUCKETS", "ControllerMetrics", "ReconcileResult"]

# controller-runtime's pkg/internal/controller/metrics buckets.
RECONCILE_TIME_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
    1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
)  # fmt: skip


class ReconcileResult:
    """Values of the `result` label of `controller_runtime_reconcile_total`."""

    SUCCESS = "success"
    ERROR = "error"
    REQUEUE = "requeue"
    REQUEUE_AFTER = "requeue_after"
    ALL = (ERROR, REQUEUE_AFTER, REQUEUE, SUCCESS)


@dataclass(frozen=True)
class _Families:
    reconcile_total: Family[FastCounter]
    reconcile_errors: Family[FastCounter]
    terminal_errors: Family[FastCounter]
    timeouts: Family[FastCounter]
    reconcile_time: Family[FastHistogram]
    max_concurrent_reconciles: Family[FastGauge]
    active_workers: Family[FastGauge]


_families_by_registry: weakref.WeakKeyDictionary[FastFamilies, _Families] = weakref.WeakKeyDictionary()


def _families_for(registry: CollectorRegistry | FastFamilies) -> _Families:
    """The families in `registry`, as pyop.metrics.fast's series: updated on every reconcile, so kept cheap."""
    fast = families_for(registry)
    families = _families_by_registry.get(fast)
    if families is None:
        families = _Families(
            reconcile_total=fast.counter(
                "controller_runtime_reconcile_total",
                "Total number of reconciliations per controller",
                ("controller", "result"),
            ),
            reconcile_errors=fast.counter(
                "controller_runtime_reconcile_errors_total",
                "Total number of reconciliation errors per controller",
                ("controller",),
            ),
            terminal_errors=fast.counter(
                "controller_runtime_terminal_reconcile_errors_total",
                "Total number of terminal reconciliation errors per controller",
                ("controller",),
            ),
            timeouts=fast.counter(
                "controller_runtime_reconcile_timeouts_total",
                "Total number of reconciliation timeouts per controller",
                ("controller",),
            ),
            reconcile_time=fast.histogram(
                "controller_runtime_reconcile_time_seconds",
                "Length of time per reconciliation per controller",
                ("controller",),
                RECONCILE_TIME_BUCKETS,
            ),
            max_concurrent_reconciles=fast.gauge(
                "controller_runtime_max_concurrent_reconciles",
                "Maximum number of concurrent reconciles per controller",
                ("controller",),
            ),
            active_workers=fast.gauge(
                "controller_runtime_active_workers",
                "Number of currently used workers per controller",
                ("controller",),
            ),
        )
        _families_by_registry[fast] = families
    return families


class ControllerMetrics:
    """The metric series of one controller, resolved once (label lookups are not free on the hot path).

    All series exist from the start with value 0, as controller-runtime's `initMetrics` makes them, so
    `rate()` queries work before the first error.
    """

    __slots__ = (
        "_results",
        "errors",
        "terminal_errors",
        "timeouts",
        "reconcile_time",
        "active_workers",
        "max_concurrent_reconciles",
    )

    def __init__(
        self, registry: CollectorRegistry | FastFamilies, controller: str, max_concurrent_reconciles: int
    ) -> None:
        families = _families_for(registry)
        self._results = {result: families.reconcile_total.labels(controller, result) for result in ReconcileResult.ALL}
        self.errors = families.reconcile_errors.labels(controller)
        self.terminal_errors = families.terminal_errors.labels(controller)
        self.timeouts = families.timeouts.labels(controller)
        self.reconcile_time = families.reconcile_time.labels(controller)
        self.active_workers = families.active_workers.labels(controller)
        self.max_concurrent_reconciles = families.max_concurrent_reconciles.labels(controller)
        self.max_concurrent_reconciles.set(max_concurrent_reconciles)
        self.active_workers.set(0)

    def count(self, result: str) -> None:
        self._results[result].inc()
