"""Server CPU per watch event, in process: a commit's fan-out (`Watcher.deliver` of a `StoredEvent`) and the
stream writing it (`Watcher.stream`: encode, join, write), on uvloop as the converge bench's server runs.

Events arrive in bursts of `--burst` per loop iteration (a server answering many writes at once, as in
bench_controller.py's converge: ~20 events per stream write), each a MODIFIED of a Widget with two managedFields
entries and a Ready condition (~1 KB on the wire); the response is a stand-in whose `write` only counts bytes, so
the figure is the watch code's own cost. With `--baseline` another checkout (a git worktree) runs in alternate
child processes, interleaved in rounds; the median per round is printed.

    python bench/bench_watch.py --baseline /tmp/watch-base --rounds 7
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent

WIDGET: dict[str, Any] = {
    "apiVersion": "bench.pyop.dev/v1",
    "kind": "Widget",
    "metadata": {
        "name": "widget-00001",
        "namespace": "bench-pyop",
        "uid": "6f1c2b9e-8a4d-4c1e-9b7a-3d2e1f0a9b8c",
        "resourceVersion": "12345",
        "generation": 1,
        "creationTimestamp": "2026-12-02T01:00:00Z",
        "managedFields": [
            {
                "manager": "pyop-client",
                "operation": "Update",
                "apiVersion": "bench.pyop.dev/v1",
                "time": "2026-12-02T01:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {".": {}, "f:image": {}, "f:size": {}}},
            },
            {
                "manager": "widget-controller",
                "operation": "Update",
                "apiVersion": "bench.pyop.dev/v1",
                "time": "2026-12-02T01:00:01Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:status": {"f:conditions": {'k:{"type":"Ready"}': {".": {}, "f:status": {}}}}},
                "subresource": "status",
            },
        ],
    },
    "spec": {"size": 3, "image": "registry.example/widget:1.0"},
    "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Reconciled", "observedGeneration": 1}]},
}


def child(events: int, burst: int, watchers: int) -> None:
    """One measurement in this process (this checkout's or the baseline's pyop, by PYTHONPATH)."""
    import asyncio

    import uvloop

    from pyop.apiserver.endpoints.watch import Watcher
    from pyop.apiserver.storage.store import StoredEvent

    class ResourceType:
        kind, api_version, conversion = "Widget", "bench.pyop.dev/v1", None

    class Response:
        written = 0

        async def write(self, data: bytes) -> None:
            Response.written += len(data)

    async def run() -> float:
        streams = [
            Watcher(
                ResourceType(),
                None,
                (),
                (),
                bookmarks=False,
                bookmark_interval=60.0,
                timeout=None,  # type: ignore[arg-type]
                current_rv=lambda: 1,
            )
            for _ in range(watchers)
        ]
        tasks = [asyncio.ensure_future(w.stream(Response())) for w in streams]  # type: ignore[arg-type]
        objects = [copy.deepcopy(WIDGET) for _ in range(events)]
        await asyncio.sleep(0)
        began = time.process_time()
        for start in range(0, events, burst):
            for obj in objects[start : start + burst]:
                event = StoredEvent(start, "MODIFIED", "widgets.bench.pyop.dev", obj, obj)
                for w in streams:
                    w.deliver(event)
            await asyncio.sleep(0)  # the streams write this burst
            await asyncio.sleep(0)
        while any(w._items for w in streams):  # noqa: SLF001 - drained
            await asyncio.sleep(0)
        spent = time.process_time() - began
        for w in streams:
            w.close()
        await asyncio.gather(*tasks)
        return spent / events * 1e6

    print(json.dumps({"us": min(uvloop.run(run()) for _ in range(3))}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. a git worktree) to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--burst", type=int, default=20, help="events committed per loop iteration")
    parser.add_argument("--child", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.events, args.burst, args.child[1])
        return
    sides = {"this": HERE} | ({"base": args.baseline} if args.baseline else {})
    for watchers in (1, 10):
        figures: dict[str, list[float]] = {side: [] for side in sides}
        for _ in range(args.rounds):
            for side, root in sides.items():
                env = {**os.environ, "PYTHONPATH": str(root)}
                command = [sys.executable, __file__, "--events", str(args.events), "--burst", str(args.burst)]
                out = subprocess.run(
                    [*command, "--child", "0", str(watchers)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                    cwd=root,
                )
                figures[side].append(json.loads(out.stdout.splitlines()[-1])["us"])
        line = ", ".join(f"{side} {statistics.median(v):.2f} us" for side, v in figures.items())
        print(f"{watchers} watcher(s), server CPU per committed event (median of {args.rounds} rounds): {line}")
        if "base" in figures:
            ratios = [b / t for b, t in zip(figures["base"], figures["this"], strict=True)]
            each = " ".join(f"x{r:.3f}" for r in ratios)
            print(f"  base/this per round: {each}; median x{statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
