"""Recovery benchmark: how long an informer takes to be in step again after the API server comes back.

Two faults, each with the test API server's fault injection, against an informer of 200 ConfigMaps:

- restart: the server stops listening (open watches end, connections are refused) for `--restart` seconds
  (2 by default), then listens again on the same port with the same state;
- outage: every request is answered 503 (no Retry-After) and open watches end, for `--outage` seconds
  (10 by default), then the server answers normally again.

One informer meets a restart, the outage, then a second restart (which meets whatever backoff the outage left).
A ConfigMap is created while the server is away (through its Python API, as another client would have); the
figure is the time from the server answering again to the informer's cache holding that ConfigMap. Each round
runs `--rounds` times with pyop's reflector backoff (bounded, reset on success) and, interleaved, with the
backoff pyop used before (client-go's `ExponentialBackoffManager` defaults: 0.8 s doubling to 30 s, jitter 1.0,
reset after 2 min without a failure, never reset on success), so the two are compared on the same machine in
the same run.

Run: `python bench/bench_recovery.py [--restart 2] [--outage 10] [--rounds 3]`. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import time
from collections.abc import Callable

from pyop.apiserver.registry.operations import WriteOptions
from pyop.client import BUILTIN, DynamicClient, Transport
from pyop.informers import Backoff, Informer
from pyop.testing import TestAPIServer

CONFIGMAPS = BUILTIN["v1/ConfigMap"]


class PreviousBackoff(Backoff):
    """The backoff as it was: client-go's manager defaults, and never reset by the reflector on success."""

    def reset(self) -> None:
        pass


def previous_backoff() -> Backoff:
    return PreviousBackoff(initial=0.8, cap=30.0, factor=2.0, jitter=1.0, reset_after=120.0)


SEQUENCE = ("restart", "outage", "restart")  # the second restart meets the backoff the outage left behind


async def away(server: TestAPIServer, fault: str, down: float, name: str) -> float:
    """Take the server away for `down` seconds, create `name` meanwhile, bring it back; returns when it is back."""
    if fault == "restart":
        await server.stop_listening()
    else:
        server.faults.respond(503, times=None)
        server.faults.close_watches()
    await asyncio.sleep(down)
    resource_type = server.resources.lookup("", "v1", "configmaps")
    server.operations.create(resource_type, "default", {"metadata": {"name": name}}, WriteOptions(field_manager="b"))
    if fault == "restart":
        await server.start_listening()
    else:
        server.faults.clear()
    return time.monotonic()


async def one_round(downtime: dict[str, float], backoff: Callable[[], Backoff]) -> list[float]:
    """For each fault of SEQUENCE, on one informer: seconds from the server answering again to the informer
    holding the object created while it was away."""
    figures = []
    async with TestAPIServer() as server:
        resource_type = server.resources.lookup("", "v1", "configmaps")
        for index in range(200):
            server.operations.create(
                resource_type, "default", {"metadata": {"name": f"cm-{index}"}}, WriteOptions(field_manager="b")
            )
        async with Transport(server.client_config()) as transport:
            informer = Informer(DynamicClient(transport), CONFIGMAPS, backoff=backoff)
            async with informer:
                await informer.wait_for_sync(30)
                for step, fault in enumerate(SEQUENCE):
                    name = f"made-while-away-{step}"
                    back = await away(server, fault, downtime[fault], name)
                    while informer.store.get(name, "default") is None:
                        await asyncio.sleep(0.01)
                        if time.monotonic() - back > 180:
                            raise TimeoutError(f"{fault}: not recovered after 180 s")
                    figures.append(time.monotonic() - back)
                    await asyncio.sleep(2.0)  # in step for a while before the next fault
    return figures


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restart", type=float, default=2.0, help="seconds the server is not listening")
    parser.add_argument("--outage", type=float, default=10.0, help="seconds the server answers 503")
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    logging.getLogger("pyop").setLevel(logging.ERROR)  # the reflector's retry warnings are expected here
    downtime = {"restart": arguments.restart, "outage": arguments.outage}
    variants: list[tuple[str, Callable[[], Backoff]]] = [("pyop now", Backoff), ("before", previous_backoff)]
    figures: dict[str, list[list[float]]] = {label: [] for label, _ in variants}
    for _ in range(arguments.rounds):
        for label, backoff in variants:  # interleaved: both see the machine in the same state
            figures[label].append(await one_round(downtime, backoff))
    for step, fault in enumerate(SEQUENCE):
        what = f"{fault} {downtime[fault]:g} s" + (" after the outage" if step == 2 else "")
        for label, rounds in figures.items():
            values = [figures_of_round[step] for figures_of_round in rounds]
            shown = ", ".join(f"{value:.2f}" for value in values)
            print(
                f"{what:<28} {label:>8}: server back -> informer in step: "
                f"median {statistics.median(values):.2f} s, max {max(values):.2f} s  ({shown})"
            )


if __name__ == "__main__":
    asyncio.run(main())
