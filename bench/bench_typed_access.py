"""Typed access cost: pyop's typed client vs its dynamic client vs the official `kubernetes` client, per item.

The test API server runs in a child process, preloaded with `--objects` Widgets (a small custom resource as the
server stores it: uid, timestamps, managedFields, labels, spec, status). This process runs the clients only, and
each figure is this process's CPU time (`time.process_time`), so the server's own work is not counted; wall time is
printed beside it. Rounds interleave the contenders (typed, dynamic, official, then the next round), so a machine
whose speed swings treats them alike; the median of the rounds is printed.

- list: one list call of all objects; cost divided by the item count (typed items are models whose fields are
  validated when first read: pyop.api.trusted.from_server).
- list+read all: the same, then reading `spec.replicas` of every item (so every typed item validates that field).
- get: `--gets` single-object reads; cost per read.
- lister get: `Lister.get` on a synced informer's cache (no HTTP): a private model per read (validated), or
  `shared=True` (one read-only model per cached object version), against the raw dict.
- patch_status: merge patches of the status, validating the answer or not (`validate=False`).

The official client is synchronous (urllib3) and returns plain dicts (`CustomObjectsApi`); pyop's are asyncio.

Run: `python bench/bench_typed_access.py [--objects 500] [--rounds 7] [--gets 200]`. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
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
                                    "tags": {"type": "array", "items": {"type": "string"}},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {"replicas": {"type": "integer"}, "phase": {"type": "string"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}


def widget(i: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": f"widget-{i:05d}", "namespace": "bench", "labels": {"app": "bench", "shard": str(i % 7)}},
        "spec": {"replicas": i % 5, "color": "blue", "tags": ["a", "b"]},
    }


async def serve(objects: int) -> None:
    from pyop.apiserver.registry.operations import MERGE_PATCH, WriteOptions
    from pyop.testing import TestAPIServer

    async with TestAPIServer() as server:
        server.add_crd(CRD)
        namespaces = server.resources.lookup("", "v1", "namespaces")
        widgets = server.resources.lookup(GROUP, "v1", "widgets")
        options = WriteOptions(field_manager="bench")
        server.operations.create(namespaces, "", {"metadata": {"name": "bench"}}, options)
        for i in range(objects):
            server.operations.create(widgets, "bench", widget(i), options)
            status = {"status": {"replicas": i % 5, "phase": "Ready"}}
            server.operations.patch(
                widgets, "bench", f"widget-{i:05d}", MERGE_PATCH, status, options, subresource="status"
            )
        print(json.dumps({"kubeconfig": str(server.kubeconfig_path)}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)


def models() -> Any:
    from pyop.api import GroupVersion, KubeModel, Resource

    class WidgetSpec(KubeModel):
        replicas: int = 1
        color: str = ""
        tags: list[str] | None = None

    class WidgetStatus(KubeModel):
        replicas: int | None = None
        phase: str | None = None

    class Widget(Resource, group_version=GroupVersion(GROUP, "v1")):
        spec: WidgetSpec = WidgetSpec()
        status: WidgetStatus | None = None

    return Widget


def timed_sync(run: Callable[[], Any]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return time.process_time() - cpu, time.perf_counter() - wall


async def timed(run: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    await run()
    return time.process_time() - cpu, time.perf_counter() - wall


async def measure(kubeconfig: str, objects: int, rounds: int, gets: int) -> None:
    import kubernetes

    from pyop.client import Client, Transport, load_config, resource_for_model
    from pyop.informers import SharedInformerFactory

    widget_model = models()
    official_api = kubernetes.client.ApiClient(kubernetes.config.new_client_from_config(kubeconfig).configuration)
    official = kubernetes.client.CustomObjectsApi(official_api)
    client = Client(Transport(await load_config(kubeconfig)))
    resource = resource_for_model(widget_model)
    names = [f"widget-{i:05d}" for i in range(objects)]
    factory = SharedInformerFactory(client)
    lister = factory.lister(widget_model)
    factory.start()
    await factory.wait_for_cache_sync()

    async def typed_list() -> None:
        assert len((await client.list(widget_model, "bench")).items) == objects

    async def typed_list_read_all() -> None:
        assert sum(item.spec.replicas for item in (await client.list(widget_model, "bench")).items) >= 0

    def official_list_read_all() -> None:
        items = official.list_namespaced_custom_object(GROUP, "v1", "bench", "widgets")["items"]
        assert sum(item["spec"]["replicas"] for item in items) >= 0

    async def dynamic_list() -> None:
        assert len((await client.dynamic.list(resource, "bench")).items) == objects

    def official_list() -> None:
        assert len(official.list_namespaced_custom_object(GROUP, "v1", "bench", "widgets")["items"]) == objects

    async def typed_get() -> None:
        for i in range(gets):
            await client.get(widget_model, names[i % objects], "bench")

    async def dynamic_get() -> None:
        for i in range(gets):
            await client.dynamic.get(resource, names[i % objects], "bench")

    def official_get() -> None:
        for i in range(gets):
            official.get_namespaced_custom_object(GROUP, "v1", "bench", "widgets", names[i % objects])

    async def lister_get() -> None:
        for i in range(gets * 10):
            lister.get(names[i % objects], "bench")

    async def lister_shared() -> None:
        for i in range(gets * 10):
            lister.get(names[i % objects], "bench", shared=True)

    async def lister_raw() -> None:
        store = lister._store
        for i in range(gets * 10):
            store.get(names[i % objects], "bench")

    async def patch_validated() -> None:
        for i in range(gets // 4):
            await client.patch_status(widget_model, names[i % objects], {"status": {"phase": f"p{i}"}}, "bench")

    async def patch_unvalidated() -> None:
        for i in range(gets // 4):
            await client.patch_status(
                widget_model, names[i % objects], {"status": {"phase": f"q{i}"}}, "bench", validate=False
            )

    cases: list[tuple[str, str, Callable[[], Any], int]] = [
        ("list", "typed (pyop Client)", typed_list, objects),
        ("list", "dynamic (pyop DynamicClient)", dynamic_list, objects),
        ("list", "official kubernetes (dicts)", official_list, objects),
        ("list+read all", "typed (pyop Client)", typed_list_read_all, objects),
        ("list+read all", "official kubernetes (dicts)", official_list_read_all, objects),
        ("get", "typed (pyop Client)", typed_get, gets),
        ("get", "dynamic (pyop DynamicClient)", dynamic_get, gets),
        ("get", "official kubernetes (dicts)", official_get, gets),
        ("lister get", "typed Lister.get", lister_get, gets * 10),
        ("lister get", "typed Lister.get(shared=True)", lister_shared, gets * 10),
        ("lister get", "raw Indexer.get (dicts)", lister_raw, gets * 10),
        ("patch_status", "typed, answer validated", patch_validated, gets // 4),
        ("patch_status", "typed, validate=False", patch_unvalidated, gets // 4),
    ]
    results: dict[tuple[str, str], list[tuple[float, float]]] = {(op, who): [] for op, who, _, _ in cases}
    for _ in range(rounds + 1):  # the first round warms caches and connections and is dropped
        for op, who, run, count in cases:
            # Let the informer take in the watch events of the previous case's writes first: process time counts
            # the whole process, and that work would land on whichever case runs next (the typed list).
            await asyncio.sleep(0.05)
            if asyncio.iscoroutinefunction(run):
                cpu, wall = await timed(run)
            else:
                cpu, wall = timed_sync(run)
            results[(op, who)].append((cpu / count * 1e6, wall / count * 1e6))
    print(f"{objects} Widgets, {rounds} interleaved rounds, median per item (client CPU us | wall us)")
    for op, who, _, _ in cases:
        samples = results[(op, who)][1:]
        cpu = statistics.median(s[0] for s in samples)
        wall = statistics.median(s[1] for s in samples)
        print(f"  {op:14s} {who:32s} {cpu:8.2f} | {wall:8.2f}")
    await factory.shutdown()
    await client.close()
    official_api.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--objects", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--gets", type=int, default=200)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.objects))
        return
    try:
        import kubernetes  # noqa: F401
    except ImportError:
        print("the official `kubernetes` client is not installed (pip install kubernetes): no comparison")
        raise SystemExit(2) from None
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--objects", str(args.objects)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdin is not None
    try:
        kubeconfig = json.loads(child.stdout.readline())["kubeconfig"]
        asyncio.run(measure(kubeconfig, args.objects, args.rounds, args.gets))
    finally:
        child.stdin.write("quit\n")
        child.stdin.flush()
        child.wait(timeout=30)


if __name__ == "__main__":
    main()
