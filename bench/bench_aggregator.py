"""Aggregator benchmark: what the test server's kube-aggregator adds to a request for an aggregated group/version.

A minimal aggregated server (HTTPS, the front-proxy client certificate required, a fixed Flunder for every GET, a
stream of watch events) is registered with a TestAPIServer; per round, variants interleaved (the machine's speed
swings):
  direct      GETs straight to the aggregated server, with the front-proxy certificate and X-Remote-* headers
  proxied     the same GETs through the test server (bearer token, RBAC, the proxy)
  local       GETs of a ConfigMap the test server serves itself (its own cost per request, for comparison)
  watch       events/s of one watch of `--events` events, direct and proxied
GETs run `--requests` times, sequentially and 10 at a time. Run: `python bench/bench_aggregator.py [--requests 500]
[--events 5000] [--rounds 3]`. Prints medians per second; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import ssl
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
from aiohttp import web

from pyop.apiserver.registry.operations import WriteOptions
from pyop.testing import TestAPIServer
from pyop.testing.aggregator import service_name_for
from pyop.webhook.certificates.authority import new_ca, new_serving_certificate

GROUP, VERSION = "wardle.example.com", "v1alpha1"
FLUNDERS = f"/apis/{GROUP}/{VERSION}/namespaces/default/flunders"
FLUNDER = json.dumps(
    {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Flunder", "metadata": {"name": "f", "namespace": "default"}}
).encode()


async def start_backend(request_header_ca: bytes, events: int, folder: Path) -> tuple[web.AppRunner, str, bytes]:
    now = datetime.now(UTC)
    ca = new_ca("bench", now, timedelta(hours=1))
    serving = new_serving_certificate(ca, [f"{service_name_for(GROUP, VERSION)}.default.svc"], now, timedelta(hours=1))
    (folder / "tls.crt").write_bytes(serving.certificate)
    (folder / "tls.key").write_bytes(serving.key)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(folder / "tls.crt", folder / "tls.key")
    context.load_verify_locations(cadata=request_header_ca.decode())
    context.verify_mode = ssl.CERT_REQUIRED
    line = json.dumps({"type": "ADDED", "object": json.loads(FLUNDER)}).encode() + b"\n"

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.query.get("watch"):
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            await response.prepare(request)
            for start in range(0, events, 100):
                await response.write(line * min(100, events - start))
            return response
        if request.path.endswith(f"/apis/{GROUP}/{VERSION}"):
            return web.json_response({"kind": "APIResourceList", "groupVersion": f"{GROUP}/{VERSION}", "resources": []})
        return web.Response(body=FLUNDER, content_type="application/json")

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context).start()
    return runner, f"https://127.0.0.1:{runner.addresses[0][1]}", ca.certificate


async def rate(count: int, one: Callable[[], Awaitable[None]], concurrency: int) -> float:
    started = time.perf_counter()
    for _ in range(count // concurrency):
        await asyncio.gather(*(one() for _ in range(concurrency)))
    return (count // concurrency) * concurrency / (time.perf_counter() - started)


async def main(requests: int, events: int, rounds: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="pyop-bench-aggregator-"))
    async with TestAPIServer() as server:
        runner, url, serving_ca = await start_backend(server.aggregator.request_header_ca, events, folder)
        await server.register_api_service(GROUP, VERSION, url, ca_bundle=serving_ca)
        identity = server.aggregator.identity
        assert identity is not None
        backend_context = identity.client_context(serving_ca)
        headers = {"X-Remote-User": "bench", "X-Remote-Group": "system:masters"}
        server.operations.create(
            server.resources.lookup("", "v1", "configmaps"),
            "default",
            {"metadata": {"name": "c"}},
            WriteOptions(),
        )
        host = f"{service_name_for(GROUP, VERSION)}.default.svc"
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=backend_context)) as direct,
            aiohttp.ClientSession(
                headers={"Authorization": f"Bearer {server.token}"},
                connector=aiohttp.TCPConnector(ssl=server.ssl_context()),
            ) as proxied,
        ):

            async def get(session: aiohttp.ClientSession, target: str, **options: object) -> None:
                async with session.get(target, **options) as response:  # type: ignore[arg-type]
                    assert response.status == 200, await response.text()
                    await response.read()

            async def watch(session: aiohttp.ClientSession, target: str, **options: object) -> float:
                started = time.perf_counter()
                async with session.get(target + "?watch=1", **options) as response:  # type: ignore[arg-type]
                    received = 0
                    async for _ in response.content:
                        received += 1
                assert received == events, received
                return events / (time.perf_counter() - started)

            variants: dict[str, Callable[[], Awaitable[None]]] = {
                "direct": lambda: get(direct, url + FLUNDERS + "/f", headers=headers, server_hostname=host),
                "proxied": lambda: get(proxied, server.url + FLUNDERS + "/f"),
                "local": lambda: get(proxied, server.url + "/api/v1/namespaces/default/configmaps/c"),
            }
            figures: dict[str, list[float]] = {}
            for _ in range(rounds):
                for name, one in variants.items():
                    for concurrency in (1, 10):
                        figures.setdefault(f"GET {name:8} x{concurrency:<2}", []).append(
                            await rate(requests, one, concurrency)
                        )
                figures.setdefault("watch direct     ", []).append(
                    await watch(direct, url + FLUNDERS, headers=headers, server_hostname=host)
                )
                figures.setdefault("watch proxied    ", []).append(await watch(proxied, server.url + FLUNDERS))
        await runner.cleanup()
    shutil.rmtree(folder, ignore_errors=True)
    print(f"aggregator benchmark: {requests} GETs per variant, {events} watch events, median of {rounds} rounds")
    for name, values in figures.items():
        unit = "events/s" if name.startswith("watch") else "requests/s"
        print(f"  {name}  {statistics.median(values):>10.0f} {unit}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.requests, arguments.events, arguments.rounds))
