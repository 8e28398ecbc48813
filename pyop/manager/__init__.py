"""The manager: runs controllers with shared caches, leader election, health probes and metrics.

    manager = Manager(ManagerOptions(leader_election=True, leader_election_id="captain.example.com",
                                     health_probe_bind_address=":8081", metrics_bind_address=":8443"))
    captain_controller.setup_with_manager(manager)
    run(manager.run())          # asyncio.run, on uvloop when installed

See docs/runtime/manager.md.
"""

from pyop.manager.listen import BindAddress, HTTPServer, parse_bind_address
from pyop.manager.loop import run
from pyop.manager.manager import LeaderElectionLost, Manager
from pyop.manager.options import ManagerOptions
from pyop.manager.probes import Check, HealthProbes, ping

__all__ = [
    "BindAddress",
    "Check",
    "HTTPServer",
    "HealthProbes",
    "LeaderElectionLost",
    "Manager",
    "ManagerOptions",
    "parse_bind_address",
    "ping",
    "run",
]
