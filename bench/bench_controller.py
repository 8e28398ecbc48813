"""pyop's controller runtime next to kopf, doing the same job against the same test API server in one run.

The job: N custom resources (default 2,000) exist; the operator must give each a `Ready=True` status condition
with `observedGeneration`, reading the object from its cache (pyop: the informer's lister; kopf: the watch body
it hands to the handler) and patching the status subresource.

Each operator runs in its own process (its memory and CPU are its own; the server keeps one core in this
process), with its own namespace of N objects on one shared `pyop.testing.TestAPIServer`, connecting through
the server's kubeconfig like a real deployment. Measured per operator:

* seconds from process start until every object's condition is on the server (polled in the server's store,
  which costs the server no requests), and until the operator's first API request (its start-up),
* CPU seconds of the operator process, and of the server process meanwhile,
* API requests the operator sent meanwhile, per object and per reconcile (handler call for kopf),
* peak resident memory of the operator process (VmHWM),
* once per run, the start-up floor: how long a Python process takes to import asyncio, ssl and pydantic and
  define one model (what any asyncio operator with pydantic models pays before its first request), and the
  converge ratio pyop would reach were its start-up only that floor (`ceiling`),
* how busy each process was between the operator's first request and convergence (CPU seconds per second), and
  the rest of the machine meanwhile, so which one limited the run: `server` or `operator` when it used at least
  80% of a core, else `machine` when other processes kept a core busy, else `waiting`; and the server's
  longest garbage-collection pause meanwhile.

kopf runs with its defaults except that posting Kubernetes Events for handler results is switched off (pyop
posts none in this job) and logging is quiet; its per-object progress annotations are part of how kopf works.
The pyop controller filters updates with `GenerationChanged()`, as Kubebuilder controllers that write their own
status usually do, so its own status writes do not wake it again (kopf's creation handler likewise runs once).

    python bench/bench_controller.py               # 2,000 objects, both operators, 64 pyop workers, 3 runs
    python bench/bench_controller.py --objects 500 --workers 8 --only pyop
    python bench/bench_controller.py --only pyop --baseline /tmp/pyop-base --runs 5   # this pyop vs another tree

`--baseline DIR` adds `pyop-base`: the same operator with the pyop package of another checkout (a worktree of
an older commit) first on its path, measured on the same server in every run, the two taking turns to go
first; the ratios printed are base/this. The server is this checkout's, so only the operator's side differs.

pyop's workers (`max_concurrent_reconciles`) are the user's knob; a burst of 2,000 objects whose reconciles
each wait for one HTTP round trip wants many of them (kopf runs one task per object). The operators' bytecode
is compiled once before measuring, as an installed package's is; the server runs on uvloop like the operators.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from widget_operator import GROUP, PLURAL  # the operator bench_controller measures, beside this file

STORAGE_KEY = f"{PLURAL}.{GROUP}"
CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": STORAGE_KEY},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": PLURAL, "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {"size": {"type": "integer"}, "image": {"type": "string"}},
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "conditions": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["type"],
                                        "items": {
                                            "type": "object",
                                            "required": ["type", "status", "reason", "lastTransitionTime"],
                                            "properties": {
                                                "type": {"type": "string"},
                                                "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                                                "reason": {"type": "string"},
                                                "message": {"type": "string"},
                                                "lastTransitionTime": {"type": "string", "format": "date-time"},
                                                "observedGeneration": {"type": "integer"},
                                            },
                                        },
                                    }
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}


# --- the operators (each runs in its own process) ---------------------------------------------------------------


KOPF_OPERATOR = f"""
import datetime

import kopf

calls = 0


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.posting.enabled = False


@kopf.on.create("{GROUP}", "v1", "{PLURAL}")
def created(body, patch, **_):
    global calls
    calls += 1
    patch.status["conditions"] = [
        {{
            "type": "Ready",
            "status": "True",
            "reason": "Reconciled",
            "message": "widget is ready",
            "lastTransitionTime": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "observedGeneration": body["metadata"].get("generation"),
        }}
    ]


@kopf.on.cleanup()
def report(**_):
    print(f"RECONCILES {{calls}}", flush=True)
"""
"""The same job as kopf users write it: a creation handler patching the status through kopf's `patch`, run
with `kopf run` (which, like `pyop.manager.run`, uses uvloop when it is installed)."""


# --- the driver ---------------------------------------------------------------------------------------------


def _ready(obj: dict[str, Any]) -> bool:
    for condition in (obj.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready" and condition.get("status") == "True":
            return bool(condition.get("observedGeneration") == obj["metadata"].get("generation"))
    return False


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process (from /proc, before it exits)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def measure(
    server: Any, contender: str, namespace: str, objects: int, workers: int, scratch: Path
) -> dict[str, Any]:
    env = process_env(baseline=contender == "pyop-base", KUBECONFIG=str(server.kubeconfig_path), PYTHONUNBUFFERED="1")
    if contender == "kopf":
        operator = scratch / "kopf_operator.py"
        operator.write_text(KOPF_OPERATOR)
        command = [sys.executable, "-m", "kopf", "run", "--standalone", "--quiet", f"--namespace={namespace}"]
        command.append(str(operator))
    else:
        command = [sys.executable, "-c", _PYOP_ENTRY, namespace, str(workers)]
    server.reset_requests()
    pauses: list[float] = []
    gc_began = [0.0]

    def gc_pause(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_began[0] = time.perf_counter()
        else:
            pauses.append(time.perf_counter() - gc_began[0])

    gc.callbacks.append(gc_pause)
    server_cpu = time.process_time()
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(*command, env=env, stdout=asyncio.subprocess.PIPE)
    store = server.store
    # Every 5 ms, objects are checked in name order (the order both operators list them in) up to the first one
    # not yet ready, and the ready ones are never looked at again: the driver shares the server's process, so a
    # poll must cost the server next to nothing (checking every pending object cost ~1 ms per poll at first).
    # The interval bounds how late a convergence or a first request is seen: 20 ms, ~3% of pyop's converge,
    # made the figures that much coarser.
    pending = sorted((obj["metadata"]["name"] for obj in store.objects(STORAGE_KEY, namespace)), reverse=True)
    assert len(pending) == objects, f"{namespace} holds {len(pending)} objects, expected {objects}"
    converged = None
    first_request = None
    operator_cpu_at_start = server_cpu_at_start = machine_cpu_at_start = float("nan")
    peak = cpu = float("nan")
    try:
        async with asyncio.timeout(300):
            while True:
                if first_request is None and server.request_count:
                    first_request = time.monotonic() - started
                    operator_cpu_at_start = _cpu_seconds(process.pid)
                    server_cpu_at_start = time.process_time()
                    machine_cpu_at_start = _machine_busy_seconds()
                while pending and _ready(store.get(STORAGE_KEY, namespace, pending[-1]) or {}):
                    pending.pop()
                if not pending:
                    converged = time.monotonic() - started
                    break
                if process.returncode is not None:
                    raise RuntimeError(f"{contender} exited with {process.returncode} before converging")
                await asyncio.sleep(0.005)
        peak = _peak_rss_mb(process.pid)
        cpu = _cpu_seconds(process.pid)
        server_end = time.process_time()
        server_cpu = server_end - server_cpu
        assert converged is not None and first_request is not None
        window = converged - first_request
        operator_busy = (cpu - operator_cpu_at_start) / window
        server_busy = (server_end - server_cpu_at_start) / window
        others_busy = (_machine_busy_seconds() - machine_cpu_at_start) / window - operator_busy - server_busy
        requests = list(server.requests)
    finally:
        gc.callbacks.remove(gc_pause)
        if process.returncode is None:
            process.terminate()
        stdout, _ = await process.communicate()
    reconciles = next(
        (int(line.split()[1]) for line in stdout.decode().splitlines() if line.startswith("RECONCILES ")), 0
    )
    by_verb = Counter(f"{r.verb} {r.resource}{'/' + r.subresource if r.subresource else ''}" for r in requests)
    return {
        "contender": contender,
        "seconds": converged,
        "startup": first_request,
        "requests": len(requests),
        "reconciles": reconciles,
        "peak_mb": peak,
        "cpu": cpu,
        "server_cpu": server_cpu,
        "operator_busy": operator_busy,
        "server_busy": server_busy,
        "others_busy": others_busy,
        "server_gc_ms": max(pauses, default=0.0) * 1000,
        "limit": _limit(operator_busy, server_busy, others_busy),
        "by_verb": by_verb,
    }


def _limit(operator_busy: float, server_busy: float, others_busy: float) -> str:
    """Which process limited a run, from the CPU each used between the operator's first request and convergence
    (in cores): one busy most of that time (>= 80% of a core) was the limit; when neither was, `machine` if other
    processes kept at least one of the machine's cores busy meanwhile (the two got what CPU was left), else
    `waiting` (round trips, the operator's own pacing)."""
    if max(operator_busy, server_busy) >= 0.8:
        return "server" if server_busy >= operator_busy else "operator"
    return "machine" if others_busy >= 1.0 else "waiting"


def _machine_busy_seconds() -> float:
    """CPU seconds all processes have used since boot (every core's non-idle time, from /proc/stat)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


_bytecode_dir = ""  # set by main() for the driver; operator processes inherit it through their environment
_baseline_tree = ""  # --baseline: the checkout whose pyop package the `pyop-base` operator imports

# The pyop operator is a module of its own, imported rather than run as a script: a script is compiled at every
# start (~5 ms here), a module's bytecode is cached like an installed operator's (and like kopf's operator file,
# which `kopf run` imports). It is not this file: importing this benchmark (argparse, statistics, tempfile) cost
# the operator's start-up ~30 ms that no real operator pays.
_PYOP_ENTRY = (
    f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
    "import widget_operator; widget_operator.main()"
)


def bytecode_env() -> dict[str, str]:
    """Compiled bytecode for the operators, as an installed package has it.

    pyop runs from this source tree (editable install) and this environment may forbid writing bytecode, so
    pyop would be recompiled at every start while kopf's site-packages come compiled. A private bytecode cache
    (warmed before measuring) gives both the start-up of an installed package, without touching the tree.
    """
    return {"PYTHONPYCACHEPREFIX": _bytecode_dir, "PYTHONDONTWRITEBYTECODE": ""}


def process_env(*, baseline: bool = False, **extra: str) -> dict[str, str]:
    """The environment of a process the benchmark starts: this one's, ``extra``, the bytecode cache, and with
    ``baseline`` the baseline checkout first on PYTHONPATH; variables left empty are dropped."""
    env = {**os.environ, **extra, **bytecode_env()}
    if baseline:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_baseline_tree, env.get("PYTHONPATH", "")]))
    return {key: value for key, value in env.items() if value}


def warm_bytecode() -> None:
    imports = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); import widget_operator, kopf, "
        "pyop.manager, pyop.controller, pyop.client.kubeconfig, kubernetes_asyncio.config"
    )
    subprocess.run([sys.executable, "-c", imports], env=process_env(), check=True)
    if _baseline_tree:
        subprocess.run([sys.executable, "-c", imports], env=process_env(baseline=True), check=True)


async def drive(objects: int, workers: int, contenders: list[str], runs: int) -> None:
    print(f"{objects} Widgets per operator on one pyop.testing server; pyop workers: {workers}; {runs} run(s)")
    print(
        f"{'run':<4} {'operator':<8} {'converge s':>10} {'1st req s':>9} {'cpu s':>6} {'requests':>9} "
        f"{'req/object':>10} {'reconciles':>10} {'req/reconcile':>13} {'peak MB':>8} {'server cpu s':>12} "
        f"{'busy op/server/others':>21} {'limit':>8} {'server GC ms':>12}"
    )
    runs_results = [await one_run(objects, workers, contenders, run) for run in range(1, runs + 1)]
    for contender in contenders:
        top = ", ".join(f"{key}: {count}" for key, count in runs_results[-1][contender]["by_verb"].most_common(5))
        print(f"  {contender} requests: {top}")
    if "pyop" in contenders and "pyop-base" in contenders:
        _print_baseline_ratios(runs_results, runs)
    if "pyop" in contenders and "kopf" in contenders:
        ratios = [_ratios(results["pyop"], results["kopf"]) for results in runs_results]
        for run, ratio in enumerate(ratios, 1):
            print(
                f"run {run} kopf/pyop: converge time x{ratio['converge']:.2f}, after the first request "
                f"x{ratio['after_start']:.2f}, peak memory x{ratio['memory']:.2f}, CPU x{ratio['cpu']:.2f}, "
                f"requests x{ratio['requests']:.2f}; start-up floor {runs_results[run - 1]['pyop']['floor']:.2f} s, "
                f"converge ceiling x{ratio['ceiling']:.2f}"
            )
        median = {key: statistics.median(ratio[key] for ratio in ratios) for key in ratios[0]}
        print(
            f"median over {runs} run(s), kopf/pyop: converge time x{median['converge']:.2f} (target >= 8), "
            f"after the first request x{median['after_start']:.2f}, "
            f"peak memory x{median['memory']:.2f} (target >= 1), CPU x{median['cpu']:.2f}, "
            f"requests x{median['requests']:.2f}, converge ceiling with pyop's start-up at the floor "
            f"x{median['ceiling']:.2f}"
        )


async def one_run(objects: int, workers: int, contenders: list[str], run: int) -> dict[str, dict[str, Any]]:
    """Both operators on a fresh server holding `objects` new Widgets for each."""
    from pyop.client import APIResource, Client
    from pyop.testing import TestAPIServer

    widgets = APIResource(GROUP, "v1", "Widget", PLURAL, True)
    namespaces = APIResource("", "v1", "Namespace", "namespaces", False)
    async with TestAPIServer() as server:
        server.add_crd(CRD)
        async with Client(server.client_config()) as client:
            for contender in contenders:
                namespace = f"bench-{contender}"
                await client.dynamic.create(namespaces, {"metadata": {"name": namespace}})
                for index in range(objects):
                    await client.dynamic.create(
                        widgets,
                        {
                            "metadata": {"name": f"widget-{index:05d}", "namespace": namespace},
                            "spec": {"size": index % 7, "image": "registry.example/widget:1.0"},
                        },
                    )
        results = {}
        floor = await startup_floor()
        # With a baseline, the two pyop operators take turns to go first (the machine's load drifts).
        order = contenders if run % 2 or "pyop-base" not in contenders else _swap_pyops(contenders)
        for contender in order:
            with tempfile.TemporaryDirectory() as scratch:
                result = await measure(server, contender, f"bench-{contender}", objects, workers, Path(scratch))
            result["floor"] = floor
            results[contender] = result
            per_reconcile = result["requests"] / result["reconciles"] if result["reconciles"] else float("nan")
            print(
                f"{run:<4} {contender:<8} {result['seconds']:>10.2f} {result['startup']:>9.2f} {result['cpu']:>6.2f} "
                f"{result['requests']:>9} {result['requests'] / objects:>10.2f} {result['reconciles']:>10} "
                f"{per_reconcile:>13.2f} "
                f"{result['peak_mb']:>8.1f} {result['server_cpu']:>12.2f} "
                f"{result['operator_busy']:>7.0%}/{result['server_busy']:.0%}/{result['others_busy']:<6.0%} "
                f"{result['limit']:>8} {result['server_gc_ms']:>12.1f}",
                flush=True,
            )
        return results


# What every asyncio operator with pydantic models pays before its first request, whatever its framework:
# the interpreter, asyncio, ssl, pydantic and one model class.
_FLOOR = "import asyncio, ssl\nfrom pydantic import BaseModel\nclass Floor(BaseModel):\n    x: int = 0\n"


async def startup_floor() -> float:
    """Seconds from spawning a Python process that imports only `_FLOOR` until it exits (bytecode cached)."""
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", _FLOOR, env=process_env())
    await process.wait()
    return time.monotonic() - started


def _swap_pyops(contenders: list[str]) -> list[str]:
    swapped = {"pyop": "pyop-base", "pyop-base": "pyop"}
    return [swapped.get(contender, contender) for contender in contenders]


def _print_baseline_ratios(runs_results: list[dict[str, dict[str, Any]]], runs: int) -> None:
    """base/this per run and their medians: converge, after the first request, start-up, operator and server CPU."""
    keys = {
        "converge": lambda r: r["seconds"],
        "after the first request": lambda r: r["seconds"] - r["startup"],
        "start-up": lambda r: r["startup"],
        "operator CPU": lambda r: r["cpu"],
        "server CPU": lambda r: r["server_cpu"],
        "peak memory": lambda r: r["peak_mb"],
    }
    ratios = {key: [value(r["pyop-base"]) / value(r["pyop"]) for r in runs_results] for key, value in keys.items()}
    for run in range(runs):
        print(f"run {run + 1} base/this: " + ", ".join(f"{key} x{ratios[key][run]:.2f}" for key in keys))
    print(
        f"median over {runs} run(s), base/this: "
        + ", ".join(f"{key} x{statistics.median(ratios[key]):.2f}" for key in keys)
    )


def _ratios(pyop: dict[str, Any], kopf: dict[str, Any]) -> dict[str, float]:
    return {
        "converge": kopf["seconds"] / pyop["seconds"],
        "after_start": (kopf["seconds"] - kopf["startup"]) / (pyop["seconds"] - pyop["startup"]),
        "memory": kopf["peak_mb"] / pyop["peak_mb"],
        "cpu": kopf["cpu"] / pyop["cpu"],
        "requests": kopf["requests"] / pyop["requests"],
        # The converge ratio had pyop's start-up been only the floor (its first request the moment the floor's
        # imports end): the most that work on pyop's own start-up could give.
        "ceiling": kopf["seconds"] / (pyop["floor"] + pyop["seconds"] - pyop["startup"]),
    }


def main() -> None:
    global _bytecode_dir, _baseline_tree
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=64, help="pyop max_concurrent_reconciles")
    parser.add_argument("--only", choices=("pyop", "kopf"), help="run one operator only")
    parser.add_argument("--runs", type=int, default=3, help="runs, each on a fresh server; ratios' median printed")
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="also run the pyop operator with the pyop package of checkout DIR (pyop-base); ratios base/this",
    )
    args = parser.parse_args()
    from pyop.manager import run

    contenders = [args.only] if args.only else ["pyop", "kopf"]
    if args.baseline:
        _baseline_tree = str(Path(args.baseline).resolve())
        if not (Path(_baseline_tree) / "pyop" / "__init__.py").is_file():
            parser.error(f"--baseline {args.baseline!r}: no pyop package there (expected DIR/pyop/__init__.py)")
        if "pyop" not in contenders:
            parser.error("--baseline compares two pyop operators: it cannot be combined with --only kopf")
        contenders.insert(contenders.index("pyop") + 1, "pyop-base")
    with tempfile.TemporaryDirectory(prefix="pyop-bench-pycache-") as _bytecode_dir:
        warm_bytecode()
        # The server gets the fast loop too: the operators are measured here, and a kube-apiserver (Go) is
        # far faster than this Python one, so its speed should limit neither of them.
        run(drive(args.objects, args.workers, contenders, args.runs))


if __name__ == "__main__":
    main()
