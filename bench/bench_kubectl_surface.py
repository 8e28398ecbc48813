"""What the kubectl-facing parts of the test API server cost: HTTPS against plain http, OpenAPI, Tables, discovery.

1. writes: `--writes` ConfigMap creates over kept-alive connections (`--concurrency` workers, bare aiohttp, pre-encoded
   bodies) against `TestAPIServer()` (HTTPS, the default) and `TestAPIServer(tls=False)`, the two interleaved
   `--rounds` times in one run (this machine's speed swings); the client runs in the same process, so the figures
   compare the two, they are not the server's own rate (bench_test_server.py measures that).
2. the first `/openapi/v3` index (every group-version document built and hashed) and a cached one, the first
   `/openapi/v2`, one `apis/apps/v1` document after a CRD change, in milliseconds.
3. a list of `--objects` ConfigMaps as JSON and as a Table (kubectl's Accept), and aggregated discovery of /apis
   against the unaggregated /apis plus one request per group-version (what a client without it does).

Run: `python bench/bench_kubectl_surface.py [--writes 2000] [--concurrency 8] [--rounds 3] [--objects 1000]`.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

import aiohttp

from pyop.apiserver.registry.operations import WriteOptions
from pyop.testing import TestAPIServer

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
CM = "/api/v1/namespaces/default/configmaps"


def _session(server: TestAPIServer, concurrency: int) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(ssl=server.ssl_context() or True, limit=concurrency)
    headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}
    return aiohttp.ClientSession(base_url=server.url, headers=headers, connector=connector)


async def writes_per_second(tls: bool, writes: int, concurrency: int, tag: str) -> float:
    async with TestAPIServer(tls=tls, history_limit=writes * 2) as server, _session(server, concurrency) as session:
        bodies = [json.dumps({"metadata": {"name": f"{tag}-{i}"}, "data": {"k": "v"}}).encode() for i in range(writes)]
        queue = iter(bodies)

        async def worker() -> None:
            for body in queue:
                async with session.post(CM, data=body) as response:
                    await response.read()
                    assert response.status == 201, response.status

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return writes / (time.perf_counter() - start)


async def _get(session: aiohttp.ClientSession, path: str, accept: str = "application/json") -> tuple[float, bytes]:
    start = time.perf_counter()
    async with session.get(path, headers={"Accept": accept}) as response:
        body = await response.read()
        assert response.status == 200, (path, response.status)
    return (time.perf_counter() - start) * 1000, body


async def documents(objects: int) -> dict[str, Any]:
    crd: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.pyop.dev"},
        "spec": {
            "group": "example.pyop.dev",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
    figures: dict[str, Any] = {}
    async with TestAPIServer(history_limit=objects * 2 + 100) as server, _session(server, 4) as session:
        figures["openapi_v3_index_first_ms"], _ = await _get(session, "/openapi/v3")
        figures["openapi_v3_index_cached_ms"], _ = await _get(session, "/openapi/v3")
        figures["openapi_v2_first_ms"], v2 = await _get(session, "/openapi/v2")
        figures["openapi_v2_bytes"] = len(v2)
        server.add_crd(crd)
        figures["openapi_v3_apps_after_crd_change_ms"], _ = await _get(session, "/openapi/v3/apis/apps/v1")
        for i in range(objects):
            server.operations.create(
                server.resources.lookup("", "v1", "configmaps"),
                "default",
                {"metadata": {"name": f"c-{i}"}, "data": {"k": "v"}},
                WriteOptions(field_manager="bench"),
            )
        json_ms = [(await _get(session, CM))[0] for _ in range(5)]
        table_ms = [(await _get(session, CM, TABLE))[0] for _ in range(5)]
        figures[f"list_{objects}_json_ms_median"] = round(statistics.median(json_ms), 1)
        figures[f"list_{objects}_table_ms_median"] = round(statistics.median(table_ms), 1)
        aggregated = [(await _get(session, "/apis", AGGREGATED))[0] for _ in range(5)]
        figures["apis_aggregated_ms_median"] = round(statistics.median(aggregated), 1)
        unaggregated = []
        for _ in range(5):
            elapsed, body = await _get(session, "/apis")
            for group in json.loads(body)["groups"]:
                for version in group["versions"]:
                    elapsed += (await _get(session, f"/apis/{version['groupVersion']}"))[0]
            unaggregated.append(elapsed)
        figures["apis_unaggregated_all_groups_ms_median"] = round(statistics.median(unaggregated), 1)
    return {key: round(value, 1) if isinstance(value, float) else value for key, value in figures.items()}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--objects", type=int, default=1000)
    args = parser.parse_args()
    rates: dict[str, list[float]] = {"https": [], "http": []}
    for round_ in range(args.rounds):
        for name, tls in (("https", True), ("http", False)) if round_ % 2 == 0 else (("http", False), ("https", True)):
            rates[name].append(await writes_per_second(tls, args.writes, args.concurrency, f"{name}{round_}"))
    for name, values in rates.items():
        print(f"creates/s over {name:5}: median {statistics.median(values):7.0f}  runs {[round(v) for v in values]}")
    ratio = statistics.median(rates["https"]) / statistics.median(rates["http"])
    print(f"https/http median ratio: {ratio:.2f}")
    for key, value in (await documents(args.objects)).items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    asyncio.run(main())
