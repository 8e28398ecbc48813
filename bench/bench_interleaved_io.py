"""What socket I/O between writes costs the writes themselves: the registry's user CPU per write when each write is
followed by a loopback round trip, against the same writes done in runs of 16 with their round trips after them.

Why this exists: over HTTP a write cost the test server ~2x the user CPU of the same write through its Python
API, though the HTTP layer's own code (parsing, routing, encoding) measured a fraction of the gap in memory
(bench_transport.py, bench_request_chain.py). The rest is the machine: a ``recv`` and a ``send`` that wakes another
process run the kernel's TCP code, which evicts the CPU's caches, and the Python that runs next runs slower. This
script shows it without HTTP: four batches of the same size, by turns,
- ``writes``: registry creates (bench_informer's Widget, through `Operations.create`) alone;
- ``round trips``: 900-byte echo round trips over loopback TCP to another process alone;
- ``interleaved``: a create, a round trip, a create, ... (what a server answering each request at once does);
- ``runs of 16``: 16 creates, then 16 round trips (what `LeanServer` does per loop turn);
each timed in user and system CPU (`resource.getrusage`). When ``interleaved`` costs more than ``writes`` plus
``round trips``, the difference is the I/O's cost to the writes; ``runs of 16`` shows how much of it batching saves.

    python bench/bench_interleaved_io.py [--writes 3000] [--rounds 6]

Prints the median and minimum per batch kind; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_informer import CRD, GROUP, small_object  # noqa: E402 - the Widget kind

KINDS = ("writes", "round trips", "interleaved", "runs of 16")
PAYLOAD = b"x" * 900  # about a write's answer
ECHO = r"""
import socket, sys
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
print(listener.getsockname()[1], flush=True)
connection, _ = listener.accept()
connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while data := connection.recv(65536):
    connection.sendall(data)
"""


def cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


def round_trip(connection: socket.socket) -> None:
    connection.sendall(PAYLOAD)
    received = 0
    while received < len(PAYLOAD):
        received += len(connection.recv(65536))


async def measure(count: int, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """Per batch kind, (user, system) microseconds per write or round trip of each batch."""
    from pyop.apiserver.registry.operations import WriteOptions
    from pyop.testing import TestAPIServer

    echo = subprocess.Popen([sys.executable, "-c", ECHO], stdout=subprocess.PIPE, text=True)
    assert echo.stdout is not None
    connection = socket.create_connection(("127.0.0.1", int(echo.stdout.readline())))
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    results: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
    async with TestAPIServer(history_limit=1_000_000, tls=False) as server:
        server.add_crd(CRD)
        namespaces = server.resources.lookup("", "v1", "namespaces")
        for n in range(10):
            server.operations.create(namespaces, "", {"metadata": {"name": f"ns-{n}"}}, WriteOptions())
        widgets = server.resources.lookup(GROUP, "v1", "widgets")
        options = WriteOptions(field_manager="bench")
        made = 0

        def batch(kind: str) -> tuple[float, float]:
            nonlocal made
            bodies: list[dict[str, Any]] = []
            for _ in range(count):
                made += 1
                body = json.loads(json.dumps(small_object(made)))
                body["metadata"]["name"] = f"widget-{made:07d}"
                bodies.append(body)
            group = 16 if kind == "runs of 16" else 1
            user, system = cpu()
            for start in range(0, count, group):
                if kind != "round trips":
                    for body in bodies[start : start + group]:
                        server.operations.create(widgets, body["metadata"]["namespace"], body, options)
                if kind != "writes":
                    for _ in range(min(group, count - start)):
                        round_trip(connection)
            user_after, system_after = cpu()
            return (user_after - user) / count * 1e6, (system_after - system) / count * 1e6

        batch("interleaved")  # warm-up
        for number in range(rounds):
            for kind in KINDS if number % 2 == 0 else tuple(reversed(KINDS)):
                results[kind].append(batch(kind))
    connection.close()
    echo.wait(timeout=10)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=3000, help="writes (or round trips) per batch")
    parser.add_argument("--rounds", type=int, default=6, help="batches of each kind, by turns")
    args = parser.parse_args()
    began = time.perf_counter()
    results = asyncio.run(measure(args.writes, args.rounds))
    seconds = time.perf_counter() - began
    print(f"CPU us per write or round trip, {args.rounds} batches of {args.writes} each ({seconds:.0f} s)")
    print(f"{'batch':<12} {'user med':>9} {'user min':>9} {'sys med':>8}")
    medians: dict[str, float] = {}
    for kind in KINDS:
        users = [user for user, _ in results[kind]]
        medians[kind] = statistics.median(users)
        system = statistics.median(system for _, system in results[kind])
        print(f"{kind:<12} {medians[kind]:>9.1f} {min(users):>9.1f} {system:>8.1f}")
    alone = medians["writes"] + medians["round trips"]
    print(
        f"user CPU of a write and a round trip: {alone:.1f} apart, {medians['interleaved']:.1f} interleaved "
        f"(x{medians['interleaved'] / alone:.2f}), {medians['runs of 16']:.1f} in runs of 16 "
        f"(x{medians['runs of 16'] / alone:.2f})"
    )


if __name__ == "__main__":
    main()
