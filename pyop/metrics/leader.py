"""client-go's leader election metric, as controller-runtime registers it: is this replica the leader?"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyop.metrics.fast import FastFamilies, families_for

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["LeaderElectionMetrics"]


class LeaderElectionMetrics:
    """`leader_election_master_status{name=<lease>}`: 1 while leading, 0 otherwise.

    A `pyop.metrics.fast` gauge (exported as prometheus_client's `Gauge` is), so that making a manager does not
    import prometheus_client."""

    def __init__(self, registry: CollectorRegistry | FastFamilies) -> None:
        self._gauge = families_for(registry).gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
            "master. 'name' is the string used to identify the lease. Please make sure to group by name.",
            ("name",),
        )

    def set_leading(self, lease_name: str, leading: bool) -> None:
        self._gauge.labels(lease_name).set(1 if leading else 0)
