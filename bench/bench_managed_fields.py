"""managedFields' share of a write, in process, A/B against another checkout, interleaved.

Each side runs in a fresh child process (PYTHONPATH puts the other checkout's pyop first): a TestAPIServer with
bench_informer's Widget CRD, then `--writes` creates, updates (PUT), merge patches of spec, merge patches of
/status, a forced apply by a second manager and an apply again with one changed value (bench_test_server's
in-process writes), then the same six writes on Deployments (a built-in kind: a schema with map lists). Per write
kind it reports the registry's CPU time per write and the part of it spent in the field manager's hooks
(FieldManager.created / updated / apply). The hooks' part is measured by replay: every hook call of the writes is
recorded (with the objects as they were at the call), and after the writes each kind's calls are made again
`--passes` times, timed by process_time over a whole pass (the best pass counts; the collector is off during a
pass, run before it), with the field manager's cache of decoded entries as it was at each call. A per-call
clock would not do: perf_counter counts other processes' turns on a shared machine, and process_time is a ~5 us
system call here.

    git worktree add --detach /tmp/base <rev>
    python bench/bench_managed_fields.py --baseline /tmp/base [--rounds 5] [--writes 3000] [--passes 5]

Prints per write kind the median of each side and their ratio (hooks and whole write). Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
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
from bench_informer import CRD, GROUP  # noqa: E402 - the same Widget kind as the informer benchmark
from bench_test_server import applied_widget  # noqa: E402


def deployment(i: int, hint: int = 0) -> dict[str, Any]:
    """A small Deployment: two labels, one container with a port and an env var."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"web-{i:05d}", "namespace": f"ns-{i % 10}", "labels": {"app": "web"}},
        "spec": {
            "replicas": 1 + hint % 3,
            "selector": {"matchLabels": {"app": f"web-{i}"}},
            "template": {
                "metadata": {"labels": {"app": f"web-{i}"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": f"nginx:1.{hint % 20}",
                            "ports": [{"containerPort": 80}],
                            "env": [{"name": "MODE", "value": "fast"}],
                        }
                    ]
                },
            },
        },
    }


def _kind_writes(
    ops: Any,
    resource: Any,
    kind: str,
    make: Callable[[int, int], dict[str, Any]],
    change: Callable[[dict[str, Any]], Any],
    patch_body: Callable[[int], dict[str, Any]],
    status: dict[str, Any],
    count: int,
    timed: Callable[[str, Callable[[int], Any]], None],
) -> None:
    """The six writes on `count` objects of one kind, each kind of write timed by `timed`."""
    from pyop.apiserver.registry.operations import APPLY_PATCH, MERGE_PATCH, WriteOptions

    options = WriteOptions(field_manager="bench-inproc")
    apply_options = WriteOptions(field_manager="bench-apply", force=True)
    objects = [make(i, 0) for i in range(count)]
    names = [(obj["metadata"]["namespace"], obj["metadata"]["name"]) for obj in objects]
    stored: list[dict[str, Any]] = []
    timed(f"{kind} create", lambda i: stored.append(ops.create(resource, names[i][0], objects[i], options)))
    bodies = [json.loads(json.dumps(obj)) for obj in stored]
    for body in bodies:
        change(body)
    timed(f"{kind} update", lambda i: ops.update(resource, *names[i], bodies[i], options))
    timed(f"{kind} merge", lambda i: ops.patch(resource, *names[i], MERGE_PATCH, patch_body(i), options))
    timed(
        f"{kind} status",
        lambda i: ops.patch(resource, *names[i], MERGE_PATCH, status, options, subresource="status"),
    )
    for label, round_number in (("apply-force", 1), ("apply-again", 2)):
        timed(
            f"{kind} {label}",
            lambda i, r=round_number: ops.patch(
                resource, *names[i], APPLY_PATCH, make(i, 1_000_000 * r + i), apply_options
            ),
        )


def run_child(count: int, passes: int) -> dict[str, list[float]]:
    from pyop.apiserver.registry import managed_fields
    from pyop.apiserver.registry.operations import WriteOptions
    from pyop.testing import TestAPIServer

    Call = tuple[Any, Callable[..., Any], tuple[Any, ...], dict[str, Any], Any, Any]
    recorded: dict[str, list[Call]] = {}
    kind_of_write = [""]

    def recording(name: str) -> None:
        original = getattr(managed_fields.FieldManager, name)

        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            live = None  # the stored managedFields the hook starts from, and the cache entry decoding them
            if name != "created" and args[1] is not None:
                live = args[1]["metadata"].get("managedFields")
            seed = self._decoded.get(id(live)) if live is not None else None
            position = 1 if name == "created" else 2  # the object the registry changes after the call
            snapshot = list(args)
            if isinstance(snapshot[position], dict):
                snapshot[position] = dict(snapshot[position])
                if isinstance(snapshot[position].get("metadata"), dict):
                    snapshot[position]["metadata"] = dict(snapshot[position]["metadata"])
            recorded.setdefault(kind_of_write[0], []).append((self, original, tuple(snapshot), kwargs, live, seed))
            return original(self, *args, **kwargs)

        setattr(managed_fields.FieldManager, name, wrapper)

    for hook in ("created", "updated", "apply"):
        recording(hook)
    results: dict[str, list[float]] = {}

    def timed(label: str, write: Callable[[int], Any]) -> None:
        kind_of_write[0] = label
        began = time.process_time()
        for i in range(count):
            write(i)
        total = time.process_time() - began
        results[label] = [total / count * 1e6]

    async def main() -> None:
        async with TestAPIServer(history_limit=200_000, tls=False) as server:
            server.add_crd(CRD)
            ops = server.operations
            namespaces = server.resources.lookup("", "v1", "namespaces")
            for n in range(10):
                ops.create(namespaces, "", {"metadata": {"name": f"ns-{n}"}}, WriteOptions(field_manager="bench"))
            _kind_writes(
                ops,
                server.resources.lookup(GROUP, "v1", "widgets"),
                "widget",
                lambda i, hint: applied_widget(100_000 + i, hint),
                lambda body: body["spec"].update(color="green"),
                lambda i: {"spec": {"generationHint": i + 1}},
                {"status": {"observedGeneration": 1, "ready": True}},
                count,
                timed,
            )
            _kind_writes(
                ops,
                server.resources.lookup("apps", "v1", "deployments"),
                "deploy",
                deployment,
                lambda body: body["spec"]["template"]["spec"]["containers"][0].update(image="nginx:2"),
                lambda i: {"spec": {"replicas": 7}},
                {"status": {"observedGeneration": 1, "replicas": 1}},
                count,
                timed,
            )

    asyncio.run(main())
    for label, calls in recorded.items():
        if label not in results:
            continue  # the namespaces' creates
        best = float("inf")
        for _ in range(passes):
            calls[0][0]._decoded.clear()
            gc.collect()
            gc.disable()  # a full collection of this process's heap (the recorded calls) would land in one pass
            began = time.process_time()
            for manager, original, args, kwargs, live, seed in calls:
                if seed is not None:
                    manager._decoded[id(live)] = seed  # as the write found it (a replay consumed it)
                original(manager, *args, **kwargs)
            best = min(best, time.process_time() - began)
            gc.enable()
        results[label].append(best / len(calls) * 1e6)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--baseline", default="", help="a checkout of another commit whose pyop the baseline child imports"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--writes", type=int, default=3000)
    parser.add_argument("--passes", type=int, default=5, help="replays of the hook calls (the best counts)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_child(args.writes, args.passes)))
        return
    sides = ["this"] + (["baseline"] if args.baseline else [])
    runs: dict[str, list[dict[str, list[float]]]] = {side: [] for side in sides}
    for number in range(args.rounds):
        for side in sides if number % 2 == 0 else list(reversed(sides)):
            env = dict(os.environ)
            if side == "baseline":
                env["PYTHONPATH"] = os.pathsep.join(
                    filter(None, [str(Path(args.baseline).resolve()), env.get("PYTHONPATH")])
                )
            output = subprocess.run(
                [sys.executable, __file__, "--child", "--writes", str(args.writes), "--passes", str(args.passes)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            runs[side].append(json.loads(output.splitlines()[-1]))
            print(f"round {number + 1} {side} done", flush=True)
    print(
        f"\nus of CPU per write, median of {args.rounds} rounds of {args.writes} writes "
        f"(hooks: the field manager's, best of {args.passes} replays)"
    )
    header = f"{'write':<20} {'hooks':>7} {'write':>7}"
    if args.baseline:
        header += f" {'base hooks':>10} {'base write':>10} {'hooks x':>7} {'write x':>7}"
    print(header)
    for label in runs["this"][0]:
        this_total = statistics.median(run[label][0] for run in runs["this"])
        this_hooks = statistics.median(run[label][1] for run in runs["this"])
        line = f"{label:<20} {this_hooks:>7.1f} {this_total:>7.1f}"
        if args.baseline:
            base_total = statistics.median(run[label][0] for run in runs["baseline"])
            base_hooks = statistics.median(run[label][1] for run in runs["baseline"])
            line += f" {base_hooks:>10.1f} {base_total:>10.1f}"
            line += f" {base_hooks / this_hooks:>6.2f}x {base_total / this_total:>6.2f}x"
        print(line)


if __name__ == "__main__":
    main()
