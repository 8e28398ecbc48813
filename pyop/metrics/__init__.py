"""Prometheus metrics of a pyop operator, named as controller-runtime names them.

`MetricsRegistry` is the registry one manager serves at `/metrics`: controller metrics
(`controller_runtime_*`), work-queue metrics (`workqueue_*`, through `pyop.workqueue`'s provider), leader
election status, and process metrics. Add your own metrics to `registry.registry` (a `prometheus_client`
`CollectorRegistry`).
"""

from pyop.metrics.controller import RECONCILE_TIME_BUCKETS, ControllerMetrics, ReconcileResult
from pyop.metrics.leader import LeaderElectionMetrics
from pyop.metrics.registry import MetricsRegistry

__all__ = [
    "RECONCILE_TIME_BUCKETS",
    "ControllerMetrics",
    "LeaderElectionMetrics",
    "MetricsRegistry",
    "ReconcileResult",
]
