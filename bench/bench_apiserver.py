"""Aggregated API server benchmark: create, get and watch throughput on each store (memory, file, etcd).

1. over HTTP (default): an `AggregatedServer` (pyop.apiserver) in this process, delegating authentication and
   authorization to a `TestAPIServer` (cached TokenReviews/SubjectAccessReviews), serving a small namespaced kind
   with `--storage-backend` memory, file and etcd3. Per round and per store: one watch is opened on the kind, then
   `--objects` creates are POSTed by `--concurrency` workers on kept-alive HTTPS connections (create/s), the watch
   counts its ADDED events (watch: events/s from the first create to the last event received), then as many GETs
   (get/s, answered from the watch cache on every store). Client and server share this process and the CPU.
2. the watch cache directly (`--direct`): `pyop.apiserver.storage.store.Store` as the registry drives it, every
   write a synchronous `Store.commit` (the backend's write, then the cache): the storage's share of a request, and
   over etcd the round trip the event loop waits for.

In direct mode, per round and per backend:
  create   `--objects` commits of new Pod-sized objects (one backend write each)
  update   as many read-modify-write commits with the resourceVersion compare
  get      `--objects` × 10 cache reads (never the backend: the same for every store, as a check)
  watch    events/s delivered to 10 subscribed watchers while updating (the cache's fan-out)
  replica  etcd only: a second Store following the same etcd applies the first one's `--objects` writes; events/s
           from the first write to the last one applied through etcd's watch (the other-replica path)

Variants are interleaved round by round (this machine's speed swings). etcd is the binary from $PYOP_ETCD or PATH,
started on loopback with a temporary data dir (its own fsync per write, as in production); `--no-etcd` leaves it
out. Run: `python bench/bench_apiserver.py [--direct] [--objects 1000] [--rounds 3] [--concurrency 8]`.
Prints figures (median of the rounds, per second); asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import ssl
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp

from pyop.api import GroupVersion, KubeModel
from pyop.api import Resource as Model
from pyop.apiserver import AggregatedServer, APIGroupVersion, RecommendedOptions, Resource
from pyop.apiserver.storage.backend import Backend
from pyop.apiserver.storage.etcd.backend import EtcdBackend
from pyop.apiserver.storage.etcd.client import EtcdClient
from pyop.apiserver.storage.etcd.local import LocalEtcd, find_etcd
from pyop.apiserver.storage.file import FileBackend
from pyop.apiserver.storage.memory import MemoryBackend
from pyop.apiserver.storage.store import Store, StoredEvent
from pyop.testing import TestAPIServer

GROUP_VERSION = GroupVersion("bench.pyop.dev", "v1")
ITEMS = "/apis/bench.pyop.dev/v1/namespaces/default/benchitems"


class BenchItemSpec(KubeModel):
    image: str = "busybox"
    replicas: int = 1


# +kubebuilder:object:root=true
class BenchItem(Model, group_version=GROUP_VERSION):
    spec: BenchItemSpec = BenchItemSpec()


def pod(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "namespace": f"ns-{i % 10}", "uid": f"uid-{i}", "labels": {"app": "bench"}},
        "spec": {"containers": [{"name": "main", "image": "busybox:1.36", "args": ["sleep", str(i)]}]},
    }


def etcd_backend(url: str, prefix: str) -> Backend:
    return EtcdBackend(EtcdClient(url), prefix)


class Counter:
    def __init__(self) -> None:
        self.count = 0

    def deliver(self, event: StoredEvent) -> None:
        self.count += 1


DIRECT_COLUMNS = ["create", "update", "get", "watch", "replica"]


def rate(count: int, started: float) -> float:
    return count / (time.perf_counter() - started)


def run_round(
    name: str, make: Callable[[], Backend], objects: int, replica: Callable[[], Backend] | None
) -> dict[str, float]:
    store = Store(10_000, make())
    figures: dict[str, float] = {}
    follower = None
    if replica is not None:
        follower = Store(10_000, replica())
        follower.follow(lambda callback: None)  # applied by sync() below, as a loop would on call_soon_threadsafe
    started = time.perf_counter()
    for i in range(objects):
        store.commit("pods", "ADDED", pod(i), None)
    figures["create"] = rate(objects, started)
    if follower is not None:
        assert follower.sync(store.resource_version, timeout=60)
        figures["replica"] = rate(objects, started)
    started = time.perf_counter()
    for _ in range(10):
        for i in range(objects):
            store.get("pods", f"ns-{i % 10}", f"pod-{i}")
    figures["get"] = rate(objects * 10, started)
    watchers = [Counter() for _ in range(10)]
    for watcher in watchers:
        store.subscribe("pods", watcher)
    started = time.perf_counter()
    for i in range(objects):
        current = store.get("pods", f"ns-{i % 10}", f"pod-{i}")
        assert current is not None
        new = copy.deepcopy(current)
        new["metadata"]["labels"]["round"] = "2"
        store.commit("pods", "MODIFIED", new, current)
    elapsed = time.perf_counter() - started
    figures["update"] = objects / elapsed
    figures["watch"] = sum(w.count for w in watchers) / elapsed
    store.close()
    if follower is not None:
        follower.close()
    return figures


async def http_round(core: TestAPIServer, storage: dict[str, Any], objects: int, concurrency: int) -> dict[str, float]:
    options = RecommendedOptions()
    for key, value in storage.items():
        setattr(options.storage, key, value)
    group = APIGroupVersion(GROUP_VERSION.group, GROUP_VERSION.version, [Resource(BenchItem)])
    headers = {"Authorization": f"Bearer {core.token}", "Content-Type": "application/json"}
    bodies = [
        json.dumps({"apiVersion": "bench.pyop.dev/v1", "kind": "BenchItem", "metadata": {"name": f"item-{i}"}}).encode()
        for i in range(objects)
    ]
    figures: dict[str, float] = {}
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        context = ssl.create_default_context(cafile=str(server.ca_file))
        connector = aiohttp.TCPConnector(ssl=context, limit=concurrency + 1)
        async with aiohttp.ClientSession(server.url, connector=connector, headers=headers) as session:
            async with session.get(ITEMS) as listed:
                start_rv = (await listed.json())["metadata"]["resourceVersion"]
            watch = await session.get(f"{ITEMS}?watch=true&resourceVersion={start_rv}")
            seen = 0

            async def count_events() -> None:
                nonlocal seen
                while seen < objects:
                    line = await watch.content.readline()
                    if not line:
                        return
                    if line.startswith(b'{"type":"ADDED"'):
                        seen += 1

            watching = asyncio.create_task(count_events())
            queue = iter(range(objects))

            async def create() -> None:
                for i in queue:
                    async with session.post(ITEMS, data=bodies[i]) as response:
                        if response.status != 201:
                            raise RuntimeError(f"create answered {response.status}: {await response.text()}")
                        await response.read()

            started = time.perf_counter()
            await asyncio.gather(*(create() for _ in range(concurrency)))
            figures["create"] = rate(objects, started)
            await asyncio.wait_for(watching, 120)
            figures["watch"] = rate(seen, started)
            watch.close()
            names = iter(range(objects))

            async def get() -> None:
                for i in names:
                    async with session.get(f"{ITEMS}/item-{i}") as response:
                        await response.read()

            started = time.perf_counter()
            await asyncio.gather(*(get() for _ in range(concurrency)))
            figures["get"] = rate(objects, started)
    return figures


async def http_bench(
    args: argparse.Namespace, etcd: LocalEtcd | None, scratch: Path
) -> dict[str, list[dict[str, float]]]:
    results: dict[str, list[dict[str, float]]] = {}
    async with TestAPIServer() as core:
        for round_number in range(args.rounds):
            variants: list[tuple[str, dict[str, Any]]] = [
                ("memory", {"backend": "memory"}),
                ("file", {"backend": "file", "path": str(scratch / f"http-{round_number}.jsonl")}),
            ]
            if etcd is not None:
                etcd_storage = {"etcd_servers": [etcd.url], "etcd_prefix": f"/bench-http-{round_number}"}
                variants.append(("etcd", {"backend": "etcd3", **etcd_storage}))
            for name, storage in variants:
                figures = await http_round(core, storage, args.objects, args.concurrency)
                results.setdefault(name, []).append(figures)
    return results


def report(title: str, results: dict[str, list[dict[str, float]]], columns: list[str]) -> None:
    print(title)
    print(f"{'store':8}" + "".join(f"{column:>12}" for column in columns))
    for name, rounds in results.items():
        cells = []
        for column in columns:
            values = [figures[column] for figures in rounds if column in figures]
            cells.append(f"{statistics.median(values):12,.0f}" if values else f"{'-':>12}")
        print(f"{name:8}" + "".join(cells))
    if "etcd" in results and "memory" in results:
        per_write = 1000 / statistics.median(f["create"] for f in results["etcd"])
        base = 1000 / statistics.median(f["create"] for f in results["memory"])
        print(f"per create: etcd {per_write:.3f} ms, memory {base:.3f} ms (etcd's round trip waits on the event loop)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--direct", action="store_true", help="the watch cache over each backend, no HTTP")
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8, help="HTTP requests in flight")
    parser.add_argument("--no-etcd", action="store_true", help="leave etcd out")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-apiserver-"))
    etcd: LocalEtcd | None = None
    binary = None if args.no_etcd else find_etcd()
    if binary is not None:
        etcd = LocalEtcd(binary).start()
    elif not args.no_etcd:
        print("etcd not found ($PYOP_ETCD or PATH): etcd left out", file=sys.stderr)
    results: dict[str, list[dict[str, float]]] = {}
    try:
        if not args.direct:
            results = asyncio.run(http_bench(args, etcd, scratch))
        for round_number in range(args.rounds if args.direct else 0):
            variants: list[tuple[str, Callable[[], Backend], Callable[[], Backend] | None]] = [
                ("memory", MemoryBackend, None),
                ("file", partial(FileBackend, scratch / f"round-{round_number}.jsonl"), None),
            ]
            if etcd is not None:
                make_etcd = partial(etcd_backend, etcd.url, f"/bench-{round_number}")
                variants.append(("etcd", make_etcd, make_etcd))
            for name, make, replica in variants:
                results.setdefault(name, []).append(run_round(name, make, args.objects, replica))
    finally:
        if etcd is not None:
            etcd.stop()
    rounds = f"median of {args.rounds} interleaved rounds (per second)"
    if args.direct:
        report(f"watch cache over each backend, {args.objects} objects, {rounds}", results, DIRECT_COLUMNS)
    else:
        title = f"aggregated server over HTTPS, {args.objects} objects, concurrency {args.concurrency}, {rounds}"
        report(title, results, ["create", "get", "watch"])


if __name__ == "__main__":
    main()
