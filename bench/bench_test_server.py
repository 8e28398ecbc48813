"""Test API server benchmark: writes per second over HTTP, and watch fan-out to 1 and 10 watchers.

The server (`pyop.testing.TestAPIServer`) runs in a child process, as in bench_informer.py; this process is the
client. The custom resource is bench_informer's Widget (a CRD with a structural schema and a status subresource,
so every write is pruned, defaulted and validated).

1. writes over HTTP: `--writes` creates, then as many updates (PUT with the object's resourceVersion), merge
   patches of spec, merge patches of `/status`, and two rounds of server-side apply of the whole object by a
   second field manager (the first forced: it takes the fields over from the creator; the second re-applies
   with a new value, so ownership, removal and conflict checks all run), sent by `--concurrency` workers on
   kept-alive connections. Per write kind: the rate, the server's CPU seconds, request latency (p50, p99, max)
   and the server's garbage-collection pauses (the longest, how many took over 20 ms, full collections).
   The client (`--client lean`, bench/lean_http_client.py) writes pre-encoded requests and reads status and body
   only, so that it costs as little as possible; still, on a small machine client and server share the CPU, so
   the server's own CPU seconds are printed too ("server CPU": the rate the server could sustain if the client
   cost nothing) with how busy the server was. A server that waits for requests (busy well under 100%) answers
   them one per event-loop turn and its CPU per write grows: `--client aiohttp` (aiohttp's ClientSession, this
   benchmark's client until 2026-12-03) left this checkout's server 20-30% idle while the baseline's was busy.
2. writes in process: the same four writes through the server's Python API in the child (no HTTP): the registry
   and admission alone.
3. watch fan-out: 1 and then 10 watch streams are opened on the Widgets; the child applies `--events` merge patches
   through its Python API (yielding to the event loop every 200, as bench_informer does) and the time from the
   first patch to every stream having received every event gives events/s (events delivered to all watchers).
   The client counts event lines without decoding them, so the figure is the server's fan-out.

Run: `python bench/bench_test_server.py [--writes 4000] [--concurrency 16] [--events 10000]` (`--events 0`: no
watch fan-out). A/B against another commit, interleaved in one run: `git worktree add --detach /tmp/pyop-76041eb
76041eb`, then `python bench/bench_test_server.py --baseline /tmp/pyop-76041eb --rounds 3`: fresh server children
importing pyop from the baseline and from this checkout by turns, HTTP writes only, then per write kind the median
writes per server CPU second of each side and their ratio, with this side's worst p99 and longest GC pause.
`--loop uvloop` runs the server children on uvloop (as `pyop test-server` runs when uvloop is installed); with
`--baseline`, `--baseline-loop` gives the baseline's children a loop of their own (default: `--loop`), e.g.
`--baseline-loop asyncio --loop uvloop` compares the baseline as it ran then with the standalone server now.
`--profile DIR`: cProfile this checkout's server per write kind (DIR/<kind>.prof). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_informer import CRD, GROUP, small_object  # noqa: E402 - the same Widget kind as the informer benchmark
from lean_http_client import LeanHTTPClient  # noqa: E402

NAMESPACES = 10
MERGE = "application/merge-patch+json"
APPLY = "application/apply-patch+yaml"


def applied_widget(i: int, hint: int) -> dict[str, Any]:
    """Widget i as a second field manager applies it (the whole object, a new generationHint)."""
    config = small_object(i)
    config["spec"]["generationHint"] = hint
    return config


def widget_path(namespace: str, name: str = "", subresource: str = "") -> str:
    path = f"/apis/{GROUP}/v1/namespaces/{namespace}/widgets"
    if name:
        path += f"/{name}"
    if subresource:
        path += f"/{subresource}"
    return path


# --- child process: the API server -------------------------------------------------------------------------


def in_process_rates(server: Any, count: int) -> dict[str, float]:
    """Writes per second through the registry itself (no HTTP), on objects of their own."""
    from pyop.apiserver.registry.operations import APPLY_PATCH, MERGE_PATCH, WriteOptions

    widgets = server.resources.lookup(GROUP, "v1", "widgets")
    options = WriteOptions(field_manager="bench-inproc")
    ops = server.operations
    objects = [small_object(100_000 + i) for i in range(count)]
    rates: dict[str, float] = {}

    def timed(label: str, write: Callable[[int, dict[str, Any]], Any]) -> None:
        began = time.perf_counter()
        for i, obj in enumerate(objects):
            write(i, obj)
        rates[label] = count / (time.perf_counter() - began)

    stored: list[dict[str, Any]] = []
    timed(
        "create",
        lambda i, obj: stored.append(ops.create(widgets, obj["metadata"]["namespace"], obj, options)),
    )

    bodies = [json.loads(json.dumps(obj)) for obj in stored]  # what a client would send back, decoded
    for body in bodies:
        body["spec"]["color"] = "green"

    def update(i: int, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        ops.update(widgets, meta["namespace"], meta["name"], bodies[i], options)

    timed("update", update)

    def patch(i: int, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        ops.patch(widgets, meta["namespace"], meta["name"], MERGE_PATCH, {"spec": {"generationHint": i + 1}}, options)

    timed("merge patch", patch)

    def status_patch(i: int, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        body = {"status": {"observedGeneration": i, "ready": True}}
        ops.patch(widgets, meta["namespace"], meta["name"], MERGE_PATCH, body, options, subresource="status")

    timed("status patch", status_patch)

    apply_options = WriteOptions(field_manager="bench-apply", force=True)

    def apply(round_number: int) -> Callable[[int, dict[str, Any]], Any]:
        def write(i: int, obj: dict[str, Any]) -> None:
            meta = obj["metadata"]
            config = applied_widget(100_000 + i, 1_000_000 * round_number + i)
            ops.patch(widgets, meta["namespace"], meta["name"], APPLY_PATCH, config, apply_options)

        return write

    timed("apply (force)", apply(1))
    timed("apply (again)", apply(2))
    return rates


class Pauses:
    """The server's garbage-collection pauses (gc.callbacks): the longest, and how many exceeded 20 ms, since the
    last `take`."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.longest_cpu = 0.0  # the collector's own CPU time in its longest pause (the rest: other processes ran)
        self.over_20ms = 0
        self.full = 0
        self._began = self._began_cpu = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began, self._began_cpu = time.perf_counter(), time.process_time()
            return
        pause = time.perf_counter() - self._began
        if pause > self.longest:
            self.longest, self.longest_cpu = pause, time.process_time() - self._began_cpu
        self.over_20ms += pause > 0.020
        self.full += info["generation"] == 2

    def take(self) -> str:
        text = f"{self.longest * 1000:.1f} {self.longest_cpu * 1000:.1f} {self.over_20ms} {self.full}"
        self.longest, self.longest_cpu, self.over_20ms, self.full = 0.0, 0.0, 0, 0
        return text


async def serve() -> None:
    from pyop.apiserver.registry.operations import MERGE_PATCH, WriteOptions
    from pyop.testing import TestAPIServer

    pauses = Pauses()

    async with TestAPIServer(history_limit=200_000, bookmark_interval=5.0, tls=False) as server:
        server.add_crd(CRD)
        namespaces = server.resources.lookup("", "v1", "namespaces")
        widgets = server.resources.lookup(GROUP, "v1", "widgets")
        options = WriteOptions(field_manager="bench")
        for n in range(NAMESPACES):
            server.operations.create(namespaces, "", {"metadata": {"name": f"ns-{n}"}}, options)
        import pyop

        print(json.dumps({"url": server.url, "token": server.token, "pyop": pyop.__file__}), flush=True)
        loop = asyncio.get_running_loop()
        generation_hint = 10_000_000  # above anything the HTTP writes set, so no patch is a no-op
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            command = line.split()
            if not command or command[0] == "quit":
                return
            if command[0] == "cpu":
                print(f"cpu {time.process_time():.6f} {pauses.take()}", flush=True)
            elif command[0] == "profile":  # profile on | profile off FILE (--profile DIR: one file per write kind)
                if command[1] == "on":
                    profiler = cProfile.Profile()
                    profiler.enable()
                else:
                    profiler.disable()
                    profiler.dump_stats(command[2])
                print(f"profiled {command[1]}", flush=True)
            elif command[0] == "inproc":
                print("inproc " + json.dumps(in_process_rates(server, int(command[1]))), flush=True)
            elif command[0] == "update":
                count, objects = int(command[1]), int(command[2])
                began = time.perf_counter()
                for j in range(count):
                    i = j % objects
                    server.operations.patch(
                        widgets,
                        f"ns-{i % NAMESPACES}",
                        f"widget-{i:05d}",
                        MERGE_PATCH,
                        {"spec": {"generationHint": generation_hint + j}},
                        options,
                    )
                    if j % 200 == 199:
                        await asyncio.sleep(0)  # let the watch streams flush, as a busy server would
                generation_hint += count
                print(f"done {time.perf_counter() - began:.3f}", flush=True)


# --- parent process: the client ----------------------------------------------------------------------------


class Child:
    """The server process and its command channel."""

    def __init__(self, pythonpath: str = "", profile_dir: str = "", loop: str = "asyncio") -> None:
        """``pythonpath``: import pyop from there (a worktree of another commit: the A/B baseline); ``profile_dir``:
        cProfile the server during each write kind, one ``<kind>.prof`` file there; ``loop``: the child's event loop
        (``uvloop``: as pyop.manager.run runs an operator)."""
        environment = dict(os.environ)
        if pythonpath:
            environment["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, environment.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--loop", loop],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=environment,
        )
        assert self.process.stdout is not None
        endpoint = json.loads(self.process.stdout.readline())
        self.url: str = endpoint["url"]
        self.token: str = endpoint["token"]
        self.pyop: str = endpoint["pyop"]  # where the child imported pyop from
        self.profile_dir = profile_dir

    def send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    async def reply(self) -> list[str]:
        assert self.process.stdout is not None
        line = await asyncio.get_running_loop().run_in_executor(None, self.process.stdout.readline)
        return line.split(maxsplit=1)

    async def ask(self, command: str) -> str:
        self.send(command)
        return (await self.reply())[1]

    async def cpu(self) -> tuple[float, str]:
        """The server's CPU seconds so far, and its GC pauses since the last call (longest ms, over 20 ms, full)."""
        seconds, longest, cpu, over, full = (await self.ask("cpu")).split()
        return float(seconds), (
            f"GC: longest pause {longest} ms ({cpu} ms of it collecting), {over} over 20 ms, {full} full collections"
        )

    def stop(self) -> None:
        if self.process.stdin is not None and self.process.poll() is None:
            self.send("quit")
            self.process.stdin.close()
        self.process.wait(timeout=30)


@dataclass
class Result:
    """One write kind's run: what `run_writes` prints, kept for the A/B table."""

    label: str
    per_cpu_second: float  # writes per server CPU second
    p99_ms: float
    longest_pause_ms: float
    longest_pause_cpu_ms: float  # of it, the collector's own CPU (the rest: the machine ran other processes)


async def run_writes(
    child: Child,
    label: str,
    count: int,
    concurrency: int,
    request: Callable[[int], Awaitable[None]],
) -> Result:
    """`count` requests, item i by worker i % concurrency; prints wall-clock and server-CPU rates."""

    latencies: list[float] = []

    async def worker(first: int) -> None:
        for i in range(first, count, concurrency):
            sent = time.perf_counter()
            await request(i)
            latencies.append(time.perf_counter() - sent)

    if child.profile_dir:
        await child.ask("profile on")
    cpu_before, _ = await child.cpu()
    began = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    elapsed = time.perf_counter() - began
    cpu_after, pauses = await child.cpu()
    if child.profile_dir:
        await child.ask(f"profile off {Path(child.profile_dir) / label.replace(' ', '_')}.prof")
    server_cpu = cpu_after - cpu_before
    latencies.sort()
    p50, p99 = latencies[len(latencies) // 2], latencies[min(len(latencies) - 1, len(latencies) * 99 // 100)]
    print(
        f"http {label}: {count} in {elapsed:.3f} s = {count / elapsed:,.0f} writes/s "
        f"(server CPU {server_cpu:.3f} s = {count / server_cpu:,.0f} writes per server CPU second, "
        f"server busy {server_cpu / elapsed:.0%}); "
        f"latency p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, max {latencies[-1] * 1000:.1f} ms; {pauses}"
    )
    longest, collecting = pauses.split("longest pause ", 1)[1].split()[0:3:2]
    return Result(label, count / server_cpu, p99 * 1000, float(longest), float(collecting.lstrip("(")))


Requester = Callable[[str, str, bytes, dict[str, str]], Awaitable[tuple[int, bytes]]]  # (status, body)


@contextlib.asynccontextmanager
async def requester(child: Child, client: str, concurrency: int) -> AsyncIterator[Requester]:
    """How the write workers send: ``lean`` (bench/lean_http_client.py: cheap enough that the server is the busy
    side) or ``aiohttp`` (its ClientSession, as this benchmark sent before: the client can be the limit)."""
    if client == "lean":
        lean = LeanHTTPClient(child.url)
        try:
            yield lean.request
        finally:
            lean.close()
        return
    import aiohttp

    connector = aiohttp.TCPConnector(limit=concurrency + 16)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def request(method: str, url_path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
            async with session.request(method, child.url + url_path, data=body, headers=headers) as response:
                return response.status, await response.read()

        yield request


async def http_writes(child: Child, request: Requester, count: int, concurrency: int) -> list[Result]:
    headers = {"Authorization": f"Bearer {child.token}", "Content-Type": "application/json"}
    patch_headers = {**headers, "Content-Type": MERGE}
    names = [(f"ns-{i % NAMESPACES}", f"widget-{i:05d}") for i in range(count)]
    versions: list[str] = [""] * count

    async def send(method: str, path: str, body: bytes, request_headers: dict[str, str]) -> dict[str, Any]:
        status, raw = await request(method, path, body, request_headers)
        if status >= 300:
            raise RuntimeError(f"{method} {path}: {status} {raw[:300]!r}")
        return json.loads(raw)  # type: ignore[no-any-return]

    async def create(i: int) -> None:
        body = json.dumps(small_object(i)).encode()
        created = await send("POST", widget_path(names[i][0]), body, headers)
        versions[i] = created["metadata"]["resourceVersion"]

    async def update(i: int) -> None:
        obj = small_object(i)
        obj["metadata"]["resourceVersion"] = versions[i]
        obj["spec"]["color"] = "green"
        updated = await send("PUT", widget_path(*names[i]), json.dumps(obj).encode(), headers)
        versions[i] = updated["metadata"]["resourceVersion"]

    async def patch(i: int) -> None:
        body = b'{"spec":{"generationHint":%d}}' % (i + 1)
        await send("PATCH", widget_path(*names[i]), body, patch_headers)

    async def status_patch(i: int) -> None:
        body = b'{"status":{"observedGeneration":%d,"ready":true}}' % i
        await send("PATCH", widget_path(*names[i], "status"), body, patch_headers)

    results = [
        await run_writes(child, "create", count, concurrency, create),
        await run_writes(child, "update", count, concurrency, update),
        await run_writes(child, "merge patch", count, concurrency, patch),
        await run_writes(child, "status patch", count, concurrency, status_patch),
    ]
    apply_headers = {**headers, "Content-Type": APPLY}

    def apply(round_number: int) -> Callable[[int], Awaitable[None]]:
        async def write(i: int) -> None:
            body = json.dumps(applied_widget(i, 1_000_000 * round_number + i)).encode()
            path = widget_path(*names[i]) + "?fieldManager=bench-apply&force=true"
            await send("PATCH", path, body, apply_headers)

        return write

    results.append(await run_writes(child, "apply (force)", count, concurrency, apply(1)))
    results.append(await run_writes(child, "apply (again)", count, concurrency, apply(2)))
    return results


async def watch_fan_out(child: Child, session: Any, watchers: int, events: int, objects: int) -> None:
    headers = {"Authorization": f"Bearer {child.token}"}
    async with session.get(child.url + f"/apis/{GROUP}/v1/widgets?limit=1", headers=headers) as response:
        start_rv = (await response.json())["metadata"]["resourceVersion"]
    received = [0] * watchers
    finished = asyncio.Event()
    open_streams = 0
    all_open = asyncio.Event()

    async def watch(n: int) -> None:
        nonlocal open_streams
        params = {"watch": "true", "resourceVersion": start_rv}
        url = child.url + f"/apis/{GROUP}/v1/widgets"
        async with session.get(url, params=params, headers=headers, timeout=None) as stream:
            open_streams += 1
            if open_streams == watchers:
                all_open.set()
            async for chunk in stream.content.iter_any():
                received[n] += chunk.count(b"\n")
                if received[n] >= events:
                    if all(count >= events for count in received):
                        finished.set()
                    return

    tasks = [asyncio.create_task(watch(n)) for n in range(watchers)]
    await asyncio.wait_for(all_open.wait(), 30)
    await asyncio.sleep(0.2)  # the server has subscribed every stream
    began = time.perf_counter()
    child.send(f"update {events} {objects}")
    await asyncio.wait_for(finished.wait(), 300)
    elapsed = time.perf_counter() - began
    server_seconds = float((await child.reply())[1])
    await asyncio.gather(*tasks)
    total = events * watchers
    print(
        f"watch fan-out, {watchers} watcher{'s' if watchers > 1 else ''}: {total} events delivered in "
        f"{elapsed:.3f} s = {total / elapsed:,.0f} events/s ({events / elapsed:,.0f} updates/s; the server "
        f"applied the {events} patches and streamed them in {server_seconds:.3f} s)"
    )


async def measure(child: Child, writes: int, concurrency: int, events: int, client: str) -> None:
    import aiohttp

    async with requester(child, client, concurrency) as request:
        await http_writes(child, request, writes, concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency + 16)
    async with aiohttp.ClientSession(connector=connector) as session:
        rates = json.loads(await child.ask(f"inproc {writes}"))
        for label, rate in rates.items():
            print(f"in process {label}: {rate:,.0f} writes/s (Python API, no HTTP)")
        for watchers in (1, 10) if events > 0 else ():
            await watch_fan_out(child, session, watchers, events, writes)


async def compare(
    baseline: str,
    rounds: int,
    writes: int,
    concurrency: int,
    profile_dir: str,
    loop: str,
    baseline_loop: str = "",
    client: str = "lean",
) -> None:
    """A/B: `rounds` rounds, each a fresh child from the baseline's pyop and one from this checkout's, in
    alternating order (A B, B A, ...) so that a machine getting busier or quieter weighs on both alike; then per
    write kind the median writes per server CPU second of each, their ratio, and this checkout's p99 and longest GC
    pause (the worst of its rounds). ``loop``: this checkout's children's event loop; ``baseline_loop``: the
    baseline's (empty: the same); ``client``: see `requester`."""
    runs: dict[str, list[list[Result]]] = {"baseline": [], "this": []}
    for number in range(rounds):
        order = ["baseline", "this"] if number % 2 == 0 else ["this", "baseline"]
        for side in order:
            side_loop = baseline_loop or loop if side == "baseline" else loop
            child = Child(baseline, "", side_loop) if side == "baseline" else Child("", profile_dir, loop)
            try:
                shown = "" if baseline_loop in ("", loop) else f", {side_loop}"
                print(f"--- round {number + 1}, {side} (pyop from {Path(child.pyop).parent.parent}{shown})", flush=True)
                async with requester(child, client, concurrency) as request:
                    runs[side].append(await http_writes(child, request, writes, concurrency))
            finally:
                child.stop()
    loops = (
        f"the server on {loop}'s event loop"
        if baseline_loop in ("", loop)
        else f"the baseline's server on {baseline_loop}'s event loop, this checkout's on {loop}'s"
    )
    print(
        f"\nwrites per server CPU second, median of {rounds} rounds ({writes} writes each, {concurrency} in flight, "
        f"{loops}, the {client} client)"
    )
    print(f"{'write':<14} {'baseline':>9} {'this':>9} {'ratio':>6} {'p99 ms':>7} {'GC max ms':>9} {'of it CPU':>9}")
    for index, label in enumerate(result.label for result in runs["this"][0]):
        a = statistics.median(run[index].per_cpu_second for run in runs["baseline"])
        b = statistics.median(run[index].per_cpu_second for run in runs["this"])
        p99 = max(run[index].p99_ms for run in runs["this"])
        worst = max((run[index] for run in runs["this"]), key=lambda result: result.longest_pause_ms)
        print(
            f"{label:<14} {a:>9,.0f} {b:>9,.0f} {b / a:>5.2f}x {p99:>7.1f} {worst.longest_pause_ms:>9.1f} "
            f"{worst.longest_pause_cpu_ms:>9.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=4000, help="requests per write kind (and objects)")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight")
    parser.add_argument("--events", type=int, default=10_000, help="patches streamed to the watchers")
    parser.add_argument(
        "--baseline",
        default="",
        help="A/B: a checkout of another commit (e.g. a git worktree) whose pyop the baseline child imports; "
        "HTTP writes only, --rounds rounds each, then a table of ratios",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds per side with --baseline")
    parser.add_argument("--profile", default="", help="a folder: cProfile this checkout's server per write kind")
    parser.add_argument(
        "--loop", choices=("asyncio", "uvloop"), default="asyncio", help="the server process's event loop"
    )
    parser.add_argument(
        "--baseline-loop",
        choices=("asyncio", "uvloop"),
        default="",
        help="with --baseline: the baseline server's event loop (default: --loop's)",
    )
    parser.add_argument(
        "--client",
        choices=("lean", "aiohttp"),
        default="lean",
        help="the write workers' HTTP client: lean (bench/lean_http_client.py, the server is the busy side) or "
        "aiohttp's ClientSession (as before 2026-12-03: it can leave the server waiting)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        from pyop.manager.loop import run

        run(serve(), use_uvloop=args.loop == "uvloop")  # uvloop: as the manager runs an operator
        return
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    if args.baseline:
        asyncio.run(
            compare(
                args.baseline,
                args.rounds,
                args.writes,
                args.concurrency,
                args.profile,
                args.loop,
                args.baseline_loop,
                args.client,
            )
        )
        return
    child = Child(profile_dir=args.profile, loop=args.loop)
    try:
        asyncio.run(measure(child, args.writes, args.concurrency, args.events, args.client))
    finally:
        child.stop()


if __name__ == "__main__":
    main()
