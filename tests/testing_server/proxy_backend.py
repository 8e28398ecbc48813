"""A real HTTP server on 127.0.0.1 that plays the process behind a proxied port (the proxy tests'
`forward_port` target): it echoes what it received, redirects, answers gzip, serves an HTML page and echoes websocket
messages."""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web


async def echo_request(request: web.Request) -> web.StreamResponse:
    """What the backend received, as JSON (headers as a list, in order)."""
    body = await request.read()
    return web.json_response(
        {
            "method": request.method,
            "path": request.raw_path,
            "headers": [[name, value] for name, value in request.headers.items()],
            "body": body.decode(),
        },
        headers={"Access-Control-Allow-Origin": "*", "X-Backend": "yes"},
    )


async def redirect(request: web.Request) -> web.StreamResponse:
    raise web.HTTPFound(request.query.get("to", "/login"))


async def compressed(request: web.Request) -> web.StreamResponse:
    return web.Response(
        body=gzip.compress(b"zipped text"), headers={"Content-Encoding": "gzip", "Content-Type": "text/plain"}
    )


PAGE = (
    '<html><head><LINK REL=stylesheet href="/static/site.css"></head><body>'
    '<a href=\'/docs/?q=1&amp;r=2\'>docs</a> <img src="logo.png"/> <a href="https://example.com/">out</a>'
    "<script>document.write('<a href=\"/inline\">')</script></body></HTML>"
)


async def page(request: web.Request) -> web.StreamResponse:
    """An HTML page with absolute, relative and foreign links; gzip-encoded when ``?gzip=1``."""
    body = PAGE.encode()
    headers = {"Content-Type": "text/html; charset=utf-8"}
    if request.query.get("gzip"):
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    return web.Response(body=body, headers=headers)


async def websocket_echo(request: web.Request) -> web.StreamResponse:
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    async for message in ws:
        await ws.send_str(f"echo: {message.data}")
    return ws


@asynccontextmanager
async def serve_backend() -> AsyncIterator[int]:
    """Serve the app on a free port of 127.0.0.1 (the port) until the block ends."""
    app = web.Application()
    app.router.add_route("*", "/redirect", redirect)
    app.router.add_get("/gzip", compressed)
    app.router.add_get("/page", page)
    app.router.add_get("/ws", websocket_echo)
    app.router.add_route("*", "/{tail:.*}", echo_request)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield port
    finally:
        await runner.cleanup()


def header(answer: dict[str, Any], name: str) -> list[str]:
    """The values of one header the backend received (any case)."""
    return [value for key, value in answer["headers"] if key.lower() == name.lower()]
