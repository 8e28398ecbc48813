"""Informer benchmark: initial sync of 10,000 custom resources (pages of 500), then 10,000 watch updates.

The test API server runs in a child process (as a real API server would: its own process and CPU), preloaded
through its Python API so setup is not measured. This process runs only the informer:

1. sync: `Informer.start()` until `has_synced` (list in pages of 500); seconds and objects per second.
2. watch: the child applies 10,000 merge patches back to back; time from the first patch to the informer having
   delivered all 10,000 updates to its handler; events per second.
3. memory: a second, fresh informer syncs the same objects under tracemalloc; bytes retained after sync divided
   by the object count is the cache cost per object (raw dicts, indices and keys included); peak traced memory
   and the process's max RSS are printed too. Done with and without `strip_managed_fields`.

Run: `python bench/bench_informer.py [--objects 10000] [--updates 10000]`. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from typing import Any

GROUP = "bench.pyop.dev"
CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
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
                                "properties": {
                                    "replicas": {"type": "integer"},
                                    "color": {"type": "string"},
                                    "generationHint": {"type": "integer"},
                                },
                            },
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}


def small_object(i: int) -> dict[str, Any]:
    """A small custom resource: name, namespace, two labels, three spec fields."""
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {
            "name": f"widget-{i:05d}",
            "namespace": f"ns-{i % 10}",
            "labels": {"app": "bench", "shard": str(i % 7)},
        },
        "spec": {"replicas": i % 5, "color": "blue", "generationHint": 0},
    }


# --- child process: the API server -------------------------------------------------------------------------


async def serve(objects: int) -> None:
    from pyop.apiserver.registry.operations import MERGE_PATCH, WriteOptions
    from pyop.testing import TestAPIServer

    async with TestAPIServer(history_limit=max(50_000, objects * 3), bookmark_interval=5.0, tls=False) as server:
        server.add_crd(CRD)
        namespaces = server.resources.lookup("", "v1", "namespaces")
        widgets = server.resources.lookup(GROUP, "v1", "widgets")
        options = WriteOptions(field_manager="bench")
        for n in range(10):
            server.operations.create(namespaces, "", {"metadata": {"name": f"ns-{n}"}}, options)
        for i in range(objects):
            obj = small_object(i)
            server.operations.create(widgets, obj["metadata"]["namespace"], obj, options)
        print(json.dumps({"url": server.url, "token": server.token}), flush=True)
        loop = asyncio.get_running_loop()
        offset = 0
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            command = line.split()
            if not command or command[0] == "quit":
                return
            if command[0] == "update":
                count = int(command[1])
                began = time.perf_counter()
                for j in range(count):
                    i = (j + offset) % objects
                    server.operations.patch(
                        widgets,
                        f"ns-{i % 10}",
                        f"widget-{i:05d}",
                        MERGE_PATCH,
                        {"spec": {"generationHint": j + offset + 1}},
                        options,
                    )
                    if j % 200 == 199:
                        await asyncio.sleep(0)  # let the watch streams flush, as a busy server would
                offset += count
                print(f"done {time.perf_counter() - began:.3f}", flush=True)


# --- parent process: the informer --------------------------------------------------------------------------


child_seconds: list[float] = []


async def run_updates(child: subprocess.Popen[str], updates: int, done: asyncio.Event | None) -> float:
    """Ask the server for `updates` patches; wait for them (and for `done`); return the seconds taken."""
    assert child.stdin is not None and child.stdout is not None
    started = time.perf_counter()
    child.stdin.write(f"update {updates}\n")
    child.stdin.flush()
    if done is not None:
        await asyncio.wait_for(done.wait(), timeout=120)
    elapsed = time.perf_counter() - started
    reply = await asyncio.get_running_loop().run_in_executor(None, child.stdout.readline)
    child_seconds.append(float(reply.split()[1]))
    return elapsed


async def measure(url: str, token: str, child: subprocess.Popen[str], objects: int, updates: int) -> None:
    from pyop.client import APIResource, ClientConfig, DynamicClient, Transport
    from pyop.informers import Informer, strip_managed_fields

    widgets = APIResource(GROUP, "v1", "Widget", "widgets", True)
    async with Transport(ClientConfig(server=url, token=token)) as transport:
        client = DynamicClient(transport)

        # 1. initial sync
        updates_seen = 0
        done = asyncio.Event()

        def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            nonlocal updates_seen
            updates_seen += 1
            if updates_seen == updates:
                done.set()

        informer = Informer(client, widgets, page_size=500)
        informer.add_event_handler(on_update=on_update)
        started = time.perf_counter()
        informer.start()
        await informer.wait_for_sync()
        sync_seconds = time.perf_counter() - started
        print(
            f"initial sync: {len(informer.store)} objects in {sync_seconds:.3f} s "
            f"({len(informer.store) / sync_seconds:,.0f} objects/s, pages of 500)"
        )

        # 2a. watch updates, live: the informer consumes while the server produces
        await asyncio.sleep(0.2)  # the watch is open
        live_seconds = await run_updates(child, updates, done)
        print(
            f"watch (live): {updates_seen} update events in {live_seconds:.3f} s "
            f"({updates_seen / live_seconds:,.0f} events/s end to end; the server itself needed "
            f"{child_seconds[-1]:.3f} s to apply the patches, so this is the server's pace)"
        )

        # 2b. watch updates, catch-up: the informer was stopped while the server applied them, then resumes its
        # watch from its last resourceVersion and receives the 10,000 events as fast as it can take them.
        await informer.stop()
        updates_seen = 0
        done.clear()
        await run_updates(child, updates, None)
        started = time.perf_counter()
        informer.start()
        await asyncio.wait_for(done.wait(), timeout=120)
        catch_up_seconds = time.perf_counter() - started
        print(
            f"watch (catch-up): {updates_seen} update events in {catch_up_seconds:.3f} s "
            f"({updates_seen / catch_up_seconds:,.0f} events/s: decode, cache, index, handler)"
        )
        stats = informer.reflectors[0].stats
        print(
            f"reflector: lists={stats.lists} watches={stats.watches} events={stats.events} "
            f"stalls={stats.stalls} failures={stats.failures}"
        )
        await informer.stop()
        del informer
        gc.collect()

        # 3. memory per cached object
        variants = (
            ("as served, interned (default)", None, True),
            ("as served, not interned", None, False),
            ("strip_managed_fields, interned", strip_managed_fields, True),
        )
        for label, transform, intern in variants:
            gc.collect()
            tracemalloc.start()
            baseline, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            informer = Informer(client, widgets, page_size=500, transform=transform, intern_strings=intern)
            informer.start()
            await informer.wait_for_sync()
            await informer.stop()
            gc.collect()
            current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            count = len(informer.store)
            sample = json.dumps(informer.store.list()[0], separators=(",", ":"))
            print(
                f"memory ({label}): {(current - baseline) / count:,.0f} bytes per cached object "
                f"({(current - baseline) / 2**20:.1f} MiB for {count}; peak traced during sync "
                f"{(peak - baseline) / 2**20:.1f} MiB; one object is {len(sample)} bytes of JSON)"
            )
            del informer
            gc.collect()
    print(f"process max RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--updates", type=int, default=10_000)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.objects))
        return
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--objects", str(args.objects)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        started = time.perf_counter()
        endpoint = json.loads(child.stdout.readline())
        print(f"server: {args.objects} objects preloaded in a child process in {time.perf_counter() - started:.1f} s")
        asyncio.run(measure(endpoint["url"], endpoint["token"], child, args.objects, args.updates))
    finally:
        if child.stdin is not None and child.poll() is None:
            child.stdin.write("quit\n")
            child.stdin.close()
        child.wait(timeout=30)


if __name__ == "__main__":
    main()
