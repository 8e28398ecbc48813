"""The HTTP transport's own CPU per request: raw requests fed to `LeanConnection` over an in-memory transport.

Why in memory: the transport's share of a write is a few microseconds of ~170, which the whole-server bench
(bench_test_server.py) cannot resolve on a shared machine. Here one process holds two connections, one of this
checkout's transport and one of a baseline's (``--baseline DIR``: the transport module of a worktree of another
commit, loaded by path; the rest of pyop is this checkout's), over the same handler, and alternates batches between
them (A B, B A, ...), so a machine getting busier weighs on both alike. Each request arrives as a socket's read
does: ``data_received`` called from a loop callback (outside any task); a batch's CPU is ``time.process_time``
around it, per request.

Handlers (``--handler``): ``stub`` answers a ready JSON response (the transport, aiohttp's request object and the
response's writing alone); ``create`` is the test server's whole chain for a create of bench_informer's Widget.

Run: `python bench/bench_transport.py --baseline /tmp/base-worktree [--handler stub,create] [--pairs 10]
[--requests 2000] [--loop asyncio|uvloop]`. Prints the median and best CPU per request of each side and their
ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_informer import CRD, GROUP, small_object  # noqa: E402 - the same Widget kind as the informer benchmark


class MemoryTransport(asyncio.Transport):
    """What a connection writes, kept; `written` is set when an answer is complete enough to read."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.written: asyncio.Future[None] = loop.create_future()
        self.out: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.out.append(bytes(data))
        if not self.written.done():
            self.written.set_result(None)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 6443)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0


def raw_request(method: str, path: str, body: bytes, token: str, content_type: str = "application/json") -> bytes:
    """The request as bench_test_server's aiohttp client sends it."""
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:6443\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: {content_type}\r\nAccept: */*\r\nAccept-Encoding: gzip, deflate\r\n"
        f"User-Agent: Python/3.11 aiohttp/3.14\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def load_transport(checkout: str) -> Any:
    """A checkout's transport module, loaded by path under a name of its own."""
    path = Path(checkout) / "pyop" / "apiserver" / "endpoints" / "transport.py"
    spec = importlib.util.spec_from_file_location("baseline_transport", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CLIENT = r"""
import socket, struct, sys
for line in sys.stdin:
    port, path = line.split()
    with open(path, "rb") as file:
        data = file.read()
    connection = socket.create_connection(("127.0.0.1", int(port)))
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    bad = offset = 0
    while offset < len(data):
        (length,) = struct.unpack_from("<I", data, offset)
        connection.sendall(data[offset + 4 : offset + 4 + length])
        offset += 4 + length
        received = b""
        while b"\r\n\r\n" not in received:
            received += connection.recv(65536)
        head, _, body = received.partition(b"\r\n\r\n")
        size = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        while len(body) < size:
            body += connection.recv(65536)
        bad += not head.startswith(b"HTTP/1.1 20")
    connection.close()
    print(bad, flush=True)
"""


async def measure(
    baseline: str, handler_name: str, pairs: int, requests: int, over_socket: bool = False
) -> tuple[list[float], list[float]]:
    """Per-request CPU (µs) of each batch: (baseline's, this checkout's). ``over_socket``: the requests come over
    loopback TCP from a client process (one connection per batch), so the socket reads and writes count too."""
    from pyop.apiserver.endpoints import transport
    from pyop.apiserver.endpoints.handlers import json_response
    from pyop.apiserver.registry.operations import WriteOptions
    from pyop.testing import TestAPIServer

    loop = asyncio.get_running_loop()
    async with TestAPIServer(history_limit=1_000_000, bookmark_interval=60.0, tls=False) as server:
        server.add_crd(CRD)
        namespaces = server.resources.lookup("", "v1", "namespaces")
        for n in range(10):
            server.operations.create(namespaces, "", {"metadata": {"name": f"ns-{n}"}}, WriteOptions())
        answer = {"kind": "Status", "apiVersion": "v1", "status": "Success"}

        async def stub(request: Any) -> Any:
            return json_response(answer)

        handler = stub if handler_name == "stub" else server.handle
        sides: dict[str, tuple[Any, MemoryTransport]] = {}
        for side, module in (("baseline", load_transport(baseline)), ("this", transport)):
            connection = module.LeanServer(handler, request_factory=server._make_request, access_log=None)()  # noqa: SLF001
            memory = MemoryTransport(loop)
            connection.connection_made(memory)
            sides[side] = (connection, memory)
        token = server.token
        counter = 0

        def next_request() -> bytes:
            nonlocal counter
            counter += 1
            obj = small_object(counter)
            obj["metadata"]["name"] = f"widget-{counter:07d}"
            namespace = obj["metadata"]["namespace"]
            return raw_request(
                "POST", f"/apis/{GROUP}/v1/namespaces/{namespace}/widgets", json.dumps(obj).encode(), token
            )

        async def batch(side: str) -> float:
            connection, memory = sides[side]
            datas = [next_request() for _ in range(requests)]
            gc.collect()
            began = time.process_time()
            for data in datas:
                memory.written = loop.create_future()
                loop.call_soon(connection.data_received, data)  # as a socket's read: outside any task
                await memory.written
                answer_bytes = b"".join(memory.out)
                memory.out.clear()
                if not answer_bytes.startswith(b"HTTP/1.1 20"):
                    raise SystemExit(f"{side}: {answer_bytes[:300]!r}")
            return (time.process_time() - began) / requests * 1e6

        if over_socket:
            batch = await _socket_batches(sides, requests, next_request)  # type: ignore[assignment]
        await batch("this")  # warm both (imports, caches)
        await batch("baseline")
        results: dict[str, list[float]] = {"baseline": [], "this": []}
        for number in range(pairs):
            for side in ("baseline", "this") if number % 2 == 0 else ("this", "baseline"):
                results[side].append(await batch(side))
        return results["baseline"], results["this"]


async def _socket_batches(sides: dict[str, tuple[Any, Any]], requests: int, next_request: Any) -> Any:
    """A batch function over loopback TCP: each side's connection factory listens on a port of its own."""
    import struct
    import subprocess
    import tempfile

    loop = asyncio.get_running_loop()
    ports: dict[str, int] = {}
    for side, (connection, _) in sides.items():
        listener = await loop.create_server(connection._server, "127.0.0.1", 0)  # noqa: SLF001 - its LeanServer
        ports[side] = listener.sockets[0].getsockname()[1]
    client = subprocess.Popen([sys.executable, "-c", CLIENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    commands, replies = client.stdin, client.stdout
    assert commands is not None and replies is not None
    folder = tempfile.mkdtemp(prefix="bench-transport-")

    async def batch(side: str) -> float:
        path = f"{folder}/{side}"
        with open(path, "wb") as file:
            for _ in range(requests):
                data = next_request()
                file.write(struct.pack("<I", len(data)) + data)
        gc.collect()
        commands.write(f"{ports[side]} {path}\n")
        commands.flush()
        began = time.process_time()
        bad = int(await loop.run_in_executor(None, replies.readline))
        spent = time.process_time() - began
        if bad:
            raise SystemExit(f"{side}: {bad} answers were not 2xx")
        return spent / requests * 1e6

    return batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="a worktree of the commit to compare with")
    parser.add_argument("--handler", default="stub,create", help="stub, create, or both (comma-separated)")
    parser.add_argument("--pairs", type=int, default=10, help="batches per side, alternating")
    parser.add_argument("--requests", type=int, default=2000, help="requests per batch")
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio")
    parser.add_argument("--socket", action="store_true", help="requests over loopback TCP from a client process")
    args = parser.parse_args()
    if args.loop == "uvloop":
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    how = "loopback TCP" if args.socket else "in memory"
    per_side = f"{args.pairs} alternating batches of {args.requests} per side"
    print(f"transport CPU per request, µs, {per_side} ({args.loop}, {how})")
    columns = ("baseline med", "this med", "ratio", "baseline min", "this min", "ratio")
    print(f"{'handler':8} " + " ".join(f"{column:>12}" for column in columns))
    for handler_name in args.handler.split(","):
        base, this = asyncio.run(measure(args.baseline, handler_name, args.pairs, args.requests, args.socket))
        base_median, this_median = statistics.median(base), statistics.median(this)
        print(
            f"{handler_name:8} {base_median:12.2f} {this_median:12.2f} {base_median / this_median:11.3f}x "
            f"{min(base):12.2f} {min(this):12.2f} {min(base) / min(this):11.3f}x"
        )


if __name__ == "__main__":
    main()
