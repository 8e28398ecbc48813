"""The registry's write path alone: CPU microseconds per write through `Operations` (no HTTP), per write kind, A/B
against another commit's pyop, interleaved batch by batch.

The writes are bench_test_server's six kinds (create, update, merge patch, status merge patch, server-side apply
forced, apply again) on bench_informer's Widget (a CRD with a structural schema and a status subresource) in a
`TestAPIServer` (its admission plugins and controllers included), each through the server's Python API.

Two server children run side by side, one importing this checkout's pyop (or `--this DIR`'s), one the
baseline's; the parent has them write `--batch` objects at a time by turns (A B, B A, ...), each child timing its
own batches in process CPU time (`time.process_time`). On a machine shared with other work, its load changes
over seconds, not between two batches of a few milliseconds: both sides meet the same load, and the ratio of
their summed costs is far steadier than that of separate runs. `--rounds` repeats it all with fresh children
and prints the median.

    git worktree add --detach /tmp/base <rev>
    python bench/bench_registry_writes.py --baseline /tmp/base [--rounds 3] [--writes 4000] [--batch 50]

`--churn N`: before the timed writes, each child creates and deletes N ConfigMaps (each write with managedFields),
as a long-lived `pyop test-server` or a long test suite on one server does. Up to d9c2dfc the field manager's cache
of decoded managedFields kept a deleted object's entry until it was evicted, so with N over its size (65,536) every
timed write there also evicted one, from the front of a plain dict (e.g. `--baseline <d9c2dfc> --churn 70000`).

Without --baseline: this checkout alone. `--profile FILE`: cProfile this side's first child (all kinds). Prints
figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_informer import CRD, GROUP, small_object  # noqa: E402 - the Widget kind
from bench_test_server import NAMESPACES, applied_widget  # noqa: E402 - the same writes as over HTTP

KINDS = ("create", "update", "merge patch", "status patch", "apply (force)", "apply (again)")


def writes(server: Any, count: int) -> dict[str, Callable[[int], Any]]:
    """Per kind, write number i (0 <= i < count, in order) and the body it sends (made beforehand: the
    client's part, not timed)."""
    from pyop.apiserver.registry.operations import APPLY_PATCH, MERGE_PATCH, WriteOptions

    widgets = server.resources.lookup(GROUP, "v1", "widgets")
    options = WriteOptions(field_manager="bench-inproc")
    apply_options = WriteOptions(field_manager="bench-apply", force=True)
    ops = server.operations
    objects = [small_object(i) for i in range(count)]
    where = [(obj["metadata"]["namespace"], obj["metadata"]["name"]) for obj in objects]
    creates = [json.loads(json.dumps(obj)) for obj in objects]
    updates: list[dict[str, Any]] = []
    merges = [{"spec": {"generationHint": i + 1}} for i in range(count)]
    statuses = [{"status": {"observedGeneration": i, "ready": True}} for i in range(count)]
    applies = {r: [applied_widget(i, 1_000_000 * r + i) for i in range(count)] for r in (1, 2)}
    return {
        "create": lambda i: ops.create(widgets, where[i][0], creates[i], options),
        "update": lambda i: ops.update(widgets, *where[i], updates[i], options),
        "merge patch": lambda i: ops.patch(widgets, *where[i], MERGE_PATCH, merges[i], options),
        "status patch": lambda i: ops.patch(
            widgets, *where[i], MERGE_PATCH, statuses[i], options, subresource="status"
        ),
        "apply (force)": lambda i: ops.patch(widgets, *where[i], APPLY_PATCH, applies[1][i], apply_options),
        "apply (again)": lambda i: ops.patch(widgets, *where[i], APPLY_PATCH, applies[2][i], apply_options),
        "_updates": lambda i: updates.append(_update_body(ops.get(widgets, *where[i]))),
    }


def _update_body(stored: dict[str, Any]) -> dict[str, Any]:
    body = json.loads(json.dumps(stored))  # what a client sends back
    body["spec"]["color"] = "green"
    return body


def churn(server: Any, count: int) -> None:
    """``count`` ConfigMaps created and deleted, one at a time (not timed)."""
    from pyop.apiserver.registry.operations import WriteOptions

    configmaps = server.resources.lookup("", "v1", "configmaps")
    options = WriteOptions(field_manager="bench-churn")
    for i in range(count):
        name = f"churn-{i}"
        server.operations.create(configmaps, "ns-0", {"metadata": {"name": name}, "data": {"a": "1"}}, options)
        server.operations.delete(configmaps, "ns-0", name, {}, options)


async def child(count: int, profile: str, churned: int) -> None:
    """Serve `run KIND N` (the next N writes of KIND: answers their CPU seconds) until `quit`."""
    from pyop.apiserver.registry.operations import WriteOptions
    from pyop.testing import TestAPIServer

    async with TestAPIServer(history_limit=200_000, bookmark_interval=5.0, tls=False) as server:
        server.add_crd(CRD)
        namespaces = server.resources.lookup("", "v1", "namespaces")
        for n in range(NAMESPACES):
            server.operations.create(namespaces, "", {"metadata": {"name": f"ns-{n}"}}, WriteOptions())
        churn(server, churned)
        import pyop

        table = writes(server, count)
        done = dict.fromkeys(KINDS, 0)
        profiler = cProfile.Profile() if profile else None
        print(json.dumps({"pyop": pyop.__file__}), flush=True)
        for line in sys.stdin:
            command = line.split()
            if command[0] == "quit":
                break
            kind, number = " ".join(command[1:-1]), int(command[-1])
            if kind == "update" and done["update"] == 0:
                for i in range(count):
                    table["_updates"](i)  # the bodies, after every create: not timed
            write, first = table[kind], done[kind]
            if profiler is not None:
                profiler.enable()
            began = time.process_time()
            for i in range(first, first + number):
                write(i)
            spent = time.process_time() - began
            if profiler is not None:
                profiler.disable()
            done[kind] += number
            print(f"{spent:.9f}", flush=True)
        if profiler is not None:
            profiler.dump_stats(profile)


class Side:
    """One server child and its command channel."""

    def __init__(self, pythonpath: str, count: int, profile: str, churned: int) -> None:
        environment = dict(os.environ)
        if pythonpath:
            environment["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, environment.get("PYTHONPATH")]))
        command = [sys.executable, __file__, "--child", "--writes", str(count), "--profile", profile]
        command += ["--churn", str(churned)]
        self.process = subprocess.Popen(
            command, env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.origin = str(Path(json.loads(self.process.stdout.readline())["pyop"]).parent.parent)

    def run(self, kind: str, number: int) -> float:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"run {kind} {number}\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("quit\n")
        self.process.stdin.close()
        self.process.wait(timeout=60)


def one_round(sides: dict[str, str], count: int, batch: int, profile: str, churned: int) -> dict[str, dict[str, float]]:
    """CPU us per write, per side and kind, the sides writing ``batch`` at a time by turns."""
    children = {name: Side(path, count, profile if name == "this" else "", churned) for name, path in sides.items()}
    try:
        spent = {name: dict.fromkeys(KINDS, 0.0) for name in children}
        names = list(children)
        for kind in KINDS:
            for number, first in enumerate(range(0, count, batch)):
                size = min(batch, count - first)
                for name in names if number % 2 == 0 else reversed(names):
                    spent[name][kind] += children[name].run(kind, size)
        for name, child_ in children.items():
            print(f"  {name:<8} pyop from {child_.origin}")
        return {name: {kind: seconds / count * 1e6 for kind, seconds in costs.items()} for name, costs in spent.items()}
    finally:
        for child_ in children.values():
            child_.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="", help="a checkout of another commit whose pyop the baseline imports")
    parser.add_argument(
        "--this", default="", help="the measured side's pyop from this folder instead (default: this checkout's)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="fresh children each round; the median is printed")
    parser.add_argument("--writes", type=int, default=4000, help="objects, and writes of each kind")
    parser.add_argument("--batch", type=int, default=50, help="writes per turn")
    parser.add_argument("--profile", default="", help="cProfile this side's first child to this file")
    parser.add_argument("--churn", type=int, default=0, help="ConfigMaps created and deleted first (not timed)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(child(args.writes, args.profile, args.churn))
        return
    sides = {"this": str(Path(args.this).resolve()) if args.this else ""}
    if args.baseline:
        sides = {"baseline": str(Path(args.baseline).resolve()), **sides}
    rounds: list[dict[str, dict[str, float]]] = []
    for number in range(args.rounds):
        print(f"round {number + 1}", flush=True)
        costs = one_round(sides, args.writes, args.batch, args.profile if number == 0 else "", args.churn)
        rounds.append(costs)
        for kind in KINDS:
            line = "  ".join(f"{name} {costs[name][kind]:6.1f}" for name in costs)
            ratio = f"  x{costs['baseline'][kind] / costs['this'][kind]:.3f}" if args.baseline else ""
            print(f"    {kind:<14} {line}{ratio}", flush=True)
    print(f"\nCPU us per write in process, median of {args.rounds} round(s) of {args.writes} writes of each kind")
    print(f"{'write':<14} {'this':>8}" + (f" {'baseline':>9} {'speed-up':>9}" if args.baseline else ""))
    for kind in KINDS:
        this = statistics.median(costs["this"][kind] for costs in rounds)
        line = f"{kind:<14} {this:>8.1f}"
        if args.baseline:
            base = statistics.median(costs["baseline"][kind] for costs in rounds)
            speed_up = statistics.median(costs["baseline"][kind] / costs["this"][kind] for costs in rounds)
            line += f" {base:>9.1f} {speed_up:>8.3f}x"
        print(line)


if __name__ == "__main__":
    main()
