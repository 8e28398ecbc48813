"""Storage benchmark: create, get and watch throughput of the watch cache over each backend (memory, file, etcd).

Until the aggregated server is benchmarked over HTTP (see --help), this drives `pyop.apiserver.storage.store.Store`
directly, as the registry does: every write is a synchronous `Store.commit` (the backend's write, then the cache),
so the figures are the storage's share of a request, and over etcd the round trip the event loop waits for.

Per round and per backend (variants interleaved round by round, as the machine's speed swings):
  create   `--objects` commits of new Pod-sized objects (one backend write each)
  update   as many read-modify-write commits with the resourceVersion compare
  get      `--objects` × 10 cache reads (never the backend: the same for every store, as a check)
  watch    events/s delivered to 10 subscribed watchers while updating (the cache's fan-out)
  replica  etcd only: a second Store following the same etcd applies the first one's `--objects` writes; events/s
           from the first write to the last one applied through etcd's watch (the other-replica path)

etcd is the binary from $PYOP_ETCD or PATH, started on loopback with a temporary data dir (its own fsync per write,
as in production); `--no-etcd` leaves it out. Run: `python bench/bench_apiserver.py [--objects 1000] [--rounds 3]`.
Prints figures (median of the rounds, per second); asserts nothing.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from pyop.apiserver.storage.backend import Backend
from pyop.apiserver.storage.etcd.backend import EtcdBackend
from pyop.apiserver.storage.etcd.client import EtcdClient
from pyop.apiserver.storage.etcd.local import LocalEtcd, find_etcd
from pyop.apiserver.storage.file import FileBackend
from pyop.apiserver.storage.memory import MemoryBackend
from pyop.apiserver.storage.store import Store, StoredEvent


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
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
        for round_number in range(args.rounds):
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
    columns = ["create", "update", "get", "watch", "replica"]
    print(f"storage throughput, {args.objects} objects, median of {args.rounds} interleaved rounds (per second)")
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
        print(f"etcd write on the event loop: {per_write:.2f} ms per create (memory: {base:.3f} ms)")


if __name__ == "__main__":
    main()
