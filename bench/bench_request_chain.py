"""The handler chain around the registry: CPU per request of `TestAPIServer.handle` with the registry stubbed.

What a request costs between the transport and the registry (authentication, routing, authorization, the
interception hooks, body and query reading, write options, the JSON answer and its response object, protobuf
and Table negotiation), without the registry's own work and without sockets: bench_test_server's whole-request
A/B cannot resolve a few microseconds on a shared machine, this can.

Each request is the raw bytes bench_test_server's client sends (its headers, the admin token, the Widget CRD's
paths and bodies), parsed by aiohttp's own parser into the `web.BaseRequest` the transport makes, then answered
by `server.handle`. The registry is stubbed: `operations.create/update/patch/get/list` return one stored Widget
(so the answer is encoded as for a real write). Kinds: create, update (PUT), merge patch, status merge patch,
apply (forced), get, list. Per kind, `--rounds` rounds of `--requests` requests, interleaved with the other
kinds; the minimum per request (CPU time, `time.process_time`) is printed.

A/B, interleaved: `python bench/bench_request_chain.py --baseline /tmp/<worktree> --rounds 4`: fresh children
importing pyop from the baseline and from this checkout by turns (`--pairs` times); per kind the median and the
minimum of each side's figures and their ratio (baseline / this: above 1 is faster). Prints figures; asserts
nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_informer import CRD, GROUP, small_object  # noqa: E402 - the Widget kind of the other benchmarks

KINDS = ("create", "update", "merge patch", "status patch", "apply", "get", "list")
NAMESPACES = 10


def _raw(method: str, path: str, body: bytes, content_type: str, token: str) -> bytes:
    """A request as bench_test_server's aiohttp client writes it."""
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:8443\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: {content_type}\r\nAccept: */*\r\nAccept-Encoding: gzip, deflate\r\n"
        f"User-Agent: Python/3.11 aiohttp/3.11.11\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def _path(namespace: str, name: str = "", subresource: str = "") -> str:
    return (
        f"/apis/{GROUP}/v1/namespaces/{namespace}/widgets"
        + (f"/{name}" if name else "")
        + (f"/{subresource}" if subresource else "")
    )


def request_bytes(kind: str, i: int, token: str) -> bytes:
    namespace, name = f"ns-{i % NAMESPACES}", f"widget-{i:05d}"
    if kind == "create":
        return _raw("POST", _path(namespace), json.dumps(small_object(i)).encode(), "application/json", token)
    if kind == "update":
        obj = small_object(i)
        obj["metadata"]["resourceVersion"] = "12"
        return _raw("PUT", _path(namespace, name), json.dumps(obj).encode(), "application/json", token)
    if kind == "merge patch":
        body = b'{"spec":{"generationHint":%d}}' % i
        return _raw("PATCH", _path(namespace, name), body, "application/merge-patch+json", token)
    if kind == "status patch":
        body = b'{"status":{"observedGeneration":%d,"ready":true}}' % i
        return _raw("PATCH", _path(namespace, name, "status"), body, "application/merge-patch+json", token)
    if kind == "apply":
        path = _path(namespace, name) + "?fieldManager=bench-apply&force=true"
        return _raw("PATCH", path, json.dumps(small_object(i)).encode(), "application/apply-patch+yaml", token)
    if kind == "get":
        return _raw("GET", _path(namespace, name), b"", "application/json", token)
    return _raw("GET", _path(namespace) + "?limit=500", b"", "application/json", token)


def measure(requests: int, rounds: int) -> dict[str, float]:
    """Microseconds of CPU per request, the minimum over rounds, per kind (in this process's pyop)."""
    from aiohttp import web
    from aiohttp.http import HttpRequestParser
    from aiohttp.http_writer import StreamWriter
    from aiohttp.web_protocol import RequestPayloadError

    from pyop import gcpolicy
    from pyop.apiserver.endpoints.transport import LeanServer
    from pyop.apiserver.registry.operations import WriteOptions
    from pyop.testing import TestAPIServer

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    server = TestAPIServer(tls=False)
    server.add_crd(CRD)
    namespaces = server.resources.lookup("", "v1", "namespaces")
    widgets = server.resources.lookup(GROUP, "v1", "widgets")
    for n in range(NAMESPACES):
        server.operations.create(namespaces, "", {"metadata": {"name": f"ns-{n}"}}, WriteOptions(field_manager="b"))
    stored = server.operations.create(widgets, "ns-0", small_object(0), WriteOptions(field_manager="b"))
    listed = {
        "kind": "WidgetList",
        "apiVersion": f"{GROUP}/v1",
        "metadata": {"resourceVersion": "1"},
        "items": [stored],
    }
    stub: Any = server.operations
    stub.create = lambda *args, **kwargs: stored
    stub.update = lambda *args, **kwargs: stored
    stub.patch = lambda *args, **kwargs: (stored, False)
    stub.get = lambda *args, **kwargs: stored
    stub.list = lambda *args, **kwargs: listed
    gcpolicy.serving_starts()  # the collector as a listening server runs it: the long-lived heap frozen
    protocol: Any = LeanServer(lambda request: None, loop=loop, access_log=None)()  # type: ignore[arg-type, return-value]

    def parsed(data: bytes) -> web.BaseRequest:
        parser = HttpRequestParser(
            protocol, loop, 2**16, max_line_size=8190, max_field_size=8190, payload_exception=RequestPayloadError
        )
        messages, _, _ = parser.feed_data(data)
        message, payload = messages[0]
        writer = StreamWriter(protocol, loop)
        return web.BaseRequest(message, payload, protocol, writer, None, loop, client_max_size=64 * 1024 * 1024)  # type: ignore[arg-type]

    async def answer(batch: list[web.BaseRequest]) -> float:
        handle = server.handle
        began = time.process_time()
        for request in batch:
            response = await handle(request)
        spent = time.process_time() - began
        if response.status >= 300:
            raise RuntimeError(f"{response.status}: {getattr(response, 'body', b'')!r}")
        return spent

    raw = {kind: [request_bytes(kind, i, server.token) for i in range(requests)] for kind in KINDS}
    figures: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for _ in range(rounds):
        for kind in KINDS:
            batch = [parsed(data) for data in raw[kind]]
            figures[kind].append(loop.run_until_complete(answer(batch)) / requests * 1e6)
            server.requests.clear()
    loop.close()
    gcpolicy.serving_ends()
    return {kind: min(values) for kind, values in figures.items()}


def compare(baseline: str, pairs: int, requests: int, rounds: int) -> None:
    sides = {"baseline": baseline, "this": str(Path(__file__).resolve().parent.parent)}
    results: dict[str, dict[str, list[float]]] = {side: {kind: [] for kind in KINDS} for side in sides}
    for _ in range(pairs):
        for side, root in sides.items():
            environment = dict(os.environ)
            environment["PYTHONPATH"] = os.pathsep.join(filter(None, [root, environment.get("PYTHONPATH")]))
            command = [sys.executable, __file__, "--requests", str(requests), "--rounds", str(rounds), "--json"]
            output = subprocess.run(command, env=environment, capture_output=True, text=True, check=True).stdout
            for kind, value in json.loads(output).items():
                results[side][kind].append(value)
    print(f"handler chain, CPU us per request (min of {rounds} rounds of {requests}; {pairs} children per side)")
    for kind in KINDS:
        base, this = results["baseline"][kind], results["this"][kind]
        print(
            f"{kind:13s} median {statistics.median(base):6.2f} -> {statistics.median(this):6.2f} "
            f"x{statistics.median(base) / statistics.median(this):.2f} | "
            f"min {min(base):6.2f} -> {min(this):6.2f} x{min(base) / min(this):.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1500, help="requests per kind per round")
    parser.add_argument("--rounds", type=int, default=8, help="rounds per child (the minimum is kept)")
    parser.add_argument("--baseline", default="", help="A/B: a checkout of another commit (a git worktree)")
    parser.add_argument("--pairs", type=int, default=4, help="with --baseline: children per side, by turns")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline:
        compare(args.baseline, args.pairs, args.requests, args.rounds)
        return
    figures = measure(args.requests, args.rounds)
    if args.json:
        print(json.dumps(figures))
        return
    for kind, value in figures.items():
        print(f"{kind:13s} {value:6.2f} us per request")


if __name__ == "__main__":
    main()
