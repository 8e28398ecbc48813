"""Leader election on a `coordination.k8s.io/v1` Lease, with client-go's algorithm and defaults.

    elector = LeaderElector(LeaseLock(client.dynamic, "operators", "captain.example.com", default_identity()))
    await elector.acquire()          # returns once leading
    lost = asyncio.create_task(elector.keep_leading())   # finishes if leadership is lost
    ...
    await elector.release()          # optional: hand over at once on shutdown

The manager does this for you with `ManagerOptions(leader_election=True, leader_election_id=...)`.
"""

from pyop.leaderelection.elector import JITTER_FACTOR, LeaderElector, default_identity
from pyop.leaderelection.lease_lock import LEASES, LeaderElectionRecord, LeaseLock

__all__ = ["JITTER_FACTOR", "LEASES", "LeaderElectionRecord", "LeaderElector", "LeaseLock", "default_identity"]
