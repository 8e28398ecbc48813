"""SIGTERM and SIGINT: the first one asks the manager to shut down gracefully, a second one exits at once.

Kubernetes sends SIGTERM and waits `terminationGracePeriodSeconds` before SIGKILL; controller-runtime's
`SetupSignalHandler` behaves the same way (first signal cancels the context, second exits with code 1).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable

__all__ = ["install_signal_handlers"]

log = logging.getLogger("pyop.manager")

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def install_signal_handlers(on_first_signal: Callable[[], None]) -> Callable[[], None]:
    """Handle SIGTERM/SIGINT on the running loop; returns a function that removes the handlers again.

    Outside the main thread (where signals cannot be handled) nothing is installed.
    """
    loop = asyncio.get_running_loop()
    received: list[int] = []

    def handle(signum: int) -> None:
        received.append(signum)
        if len(received) == 1:
            log.info("received %s, shutting down gracefully", signal.Signals(signum).name)
            on_first_signal()
        else:
            log.error("received a second signal (%s): exiting now", signal.Signals(signum).name)
            os._exit(1)

    installed = []
    for signum in SIGNALS:
        try:
            loop.add_signal_handler(signum, handle, signum)
        except (RuntimeError, ValueError, NotImplementedError):
            log.debug("cannot handle %s here (not the main thread?)", signum)
            continue
        installed.append(signum)

    def uninstall() -> None:
        for signum in installed:
            loop.remove_signal_handler(signum)

    return uninstall
