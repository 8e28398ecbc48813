"""bench/lean_http_client.py, the benchmark's load generator, reads the test server's answers as aiohttp's client
does (status and body, connections kept alive) and refuses what it cannot read instead of guessing."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import aiohttp
import pytest

from pyop.testing import TestAPIServer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from lean_http_client import LeanHTTPClient  # noqa: E402


async def test_answers_are_aiohttps_and_connections_are_reused() -> None:
    async with TestAPIServer(tls=False) as server:
        headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}
        client = LeanHTTPClient(server.url)
        try:
            path = "/api/v1/namespaces/default/configmaps"
            results = await asyncio.gather(
                *(
                    client.request("POST", path, json.dumps({"metadata": {"name": f"c{i}"}}).encode(), headers)
                    for i in range(8)
                )
            )
            assert [status for status, _ in results] == [201] * 8
            assert sorted(json.loads(body)["metadata"]["name"] for _, body in results) == [f"c{i}" for i in range(8)]
            for _ in range(3):  # one after the other: the idle connections are taken again, none is opened
                status, body = await client.request("GET", path + "/c1", b"", headers)
            assert len(client._all) == 8  # noqa: SLF001
            conflict = await client.request("POST", path, b'{"metadata":{"name":"c1"}}', headers)
        finally:
            client.close()
        async with aiohttp.ClientSession() as session:
            async with session.get(server.url + path + "/c1", headers=headers) as response:
                assert (status, json.loads(body)) == (response.status, await response.json())
            async with session.post(server.url + path, data=b'{"metadata":{"name":"c1"}}', headers=headers) as again:
                assert conflict[0] == again.status == 409
                assert json.loads(conflict[1])["reason"] == (await again.json())["reason"] == "AlreadyExists"


async def test_an_answer_without_content_length_fails_the_request() -> None:
    async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
        await writer.drain()

    listener = await asyncio.start_server(chunked, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    client = LeanHTTPClient(f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(RuntimeError, match="without Content-Length"):
            await asyncio.wait_for(client.request("GET", "/", b"", {}), 10)
    finally:
        client.close()
        listener.close()


def test_only_plain_http_urls_are_taken() -> None:
    with pytest.raises(ValueError, match="expected http://host:port"):
        LeanHTTPClient("https://127.0.0.1:6443")
