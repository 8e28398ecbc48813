"""The resource lock: a `coordination.k8s.io/v1` Lease whose spec records who leads and since when.

client-go's `resourcelock.LeaseLock`. Writes carry the resourceVersion last read, so two candidates writing at
once cannot both win: the API server answers the slower one with 409 Conflict.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pyop.client.dynamic import DynamicClient
from pyop.client.resources import BUILTIN

__all__ = ["LEASES", "LeaderElectionRecord", "LeaseLock"]

LEASES = BUILTIN["coordination.k8s.io/v1/Lease"]


def _micro_time(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass(frozen=True)
class LeaderElectionRecord:
    """What the Lease spec says: the holder, for how long its claim lasts, and when it took and renewed it."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    leader_transitions: int = 0

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": _micro_time(self.acquire_time),
            "renewTime": _micro_time(self.renew_time),
            "leaseTransitions": self.leader_transitions,
        }
        return {key: value for key, value in spec.items() if value is not None}

    @classmethod
    def from_spec(cls, spec: dict[str, Any] | None) -> LeaderElectionRecord:
        spec = spec or {}
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=_parse_time(spec.get("acquireTime")),
            renew_time=_parse_time(spec.get("renewTime")),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
        )


class LeaseLock:
    """Reads and writes one Lease; keeps the last Lease seen so that updates are conditional on it."""

    def __init__(self, client: DynamicClient, namespace: str, name: str, identity: str) -> None:
        if not identity:
            raise ValueError("leader election needs a non-empty identity")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self._lease: dict[str, Any] | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    async def get(self) -> tuple[LeaderElectionRecord, dict[str, Any]]:
        """The current record and the raw spec (for change detection); raises `NotFoundError` if absent."""
        self._lease = await self.client.get(LEASES, self.name, self.namespace)
        spec = dict(self._lease.get("spec") or {})
        return LeaderElectionRecord.from_spec(spec), spec

    async def create(self, record: LeaderElectionRecord) -> None:
        self._lease = await self.client.create(
            LEASES,
            {
                "apiVersion": LEASES.api_version,
                "kind": LEASES.kind,
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": record.to_spec(),
            },
        )

    async def update(self, record: LeaderElectionRecord) -> None:
        """Replace the spec, conditional on the resourceVersion last seen (409 if someone wrote meanwhile)."""
        if self._lease is None:
            raise RuntimeError("update before get or create: the lock has no resourceVersion to guard the write")
        body = {**self._lease, "spec": record.to_spec()}
        self._lease = await self.client.update(LEASES, body)

    @property
    def has_cached_lease(self) -> bool:
        return self._lease is not None
