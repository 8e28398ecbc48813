"""`make_request`: aiohttp's `web.BaseRequest` of a parsed request, built without `BaseRequest.__init__`.

Why: every request gets one, and the constructor's keyword handling and its branches for absolute URLs, scheme,
host and remote overrides (which the API servers never pass) cost about as much again as the object itself (~2 µs
against ~1 µs on this machine). For the request line every client sends (an origin-form path, not an absolute
URL) the object is made directly, its attributes set as the constructor sets them; an absolute URL goes to the
constructor.

Exactly aiohttp's object: at import the direct build is compared with aiohttp's own for a sample, attribute by
attribute and in the same order; when an aiohttp version sets other attributes the constructor is used instead
(tests/generic_apiserver/test_request_object.py compares the two for random requests).
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http import HttpVersion11
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import StreamReader

_new = object.__new__
_Request = web.BaseRequest


def general_request(
    message: RawRequestMessage,
    payload: StreamReader,
    protocol: Any,
    writer: AbstractStreamWriter,
    task: Any,
    loop: asyncio.AbstractEventLoop,
    client_max_size: int,
) -> web.BaseRequest:
    """aiohttp's own constructor: the reference, and the path of anything the direct build does not cover."""
    return web.BaseRequest(message, payload, protocol, writer, task, loop, client_max_size=client_max_size)


def direct_request(
    message: RawRequestMessage,
    payload: StreamReader,
    protocol: Any,
    writer: AbstractStreamWriter,
    task: Any,
    loop: asyncio.AbstractEventLoop,
    client_max_size: int,
) -> web.BaseRequest:
    """The request `general_request` makes, attribute for attribute, without its argument handling."""
    url = message.url
    if url.absolute:
        return general_request(message, payload, protocol, writer, task, loop, client_max_size)
    request: web.BaseRequest = _new(_Request)
    request._message = message  # noqa: SLF001 - as BaseRequest.__init__, in its order
    request._protocol = protocol  # noqa: SLF001
    request._payload_writer = writer  # noqa: SLF001
    request._payload = payload  # noqa: SLF001
    request._headers = message.headers  # noqa: SLF001
    request._method = message.method  # noqa: SLF001
    request._version = message.version  # noqa: SLF001
    request._cache = {}  # noqa: SLF001
    request._rel_url = url  # noqa: SLF001
    request._state = {}  # noqa: SLF001
    request._task = task  # noqa: SLF001
    request._client_max_size = client_max_size  # noqa: SLF001
    request._client_max_fields = 1000  # noqa: SLF001 - the constructor's default
    request._loop = loop  # noqa: SLF001
    request._transport_sslcontext = protocol.ssl_context  # noqa: SLF001
    request._transport_peername = protocol.peername  # noqa: SLF001
    request._transport_sockname = protocol.sockname  # noqa: SLF001
    return request


def attributes(request: web.BaseRequest) -> list[tuple[str, Any]]:
    """A request's state as comparable values: its attributes in the order they were set."""
    return list(vars(request).items())


def _same_as_aiohttp() -> bool:
    """Whether the direct build gives aiohttp's request for a sample (else this aiohttp sets other attributes)."""
    from multidict import CIMultiDict, CIMultiDictProxy
    from yarl import URL

    class Protocol:
        ssl_context = None
        peername = ("127.0.0.1", 40000)
        sockname = ("127.0.0.1", 6443)

    headers = CIMultiDictProxy(CIMultiDict({"Host": "localhost"}))
    url = URL.build(path="/api/v1/pods", query_string="limit=1", encoded=True)
    message = RawRequestMessage(
        "GET", "/api/v1/pods?limit=1", HttpVersion11, headers, ((b"Host", b"localhost"),), False, None, False,
        False, url,
    )  # fmt: skip
    protocol, loop = Protocol(), object()  # the loop is only kept
    try:
        made = [
            build(message, None, protocol, None, None, loop, 1024)  # type: ignore[arg-type]
            for build in (direct_request, general_request)
        ]
    except Exception:  # noqa: BLE001 - any surprise means: use aiohttp's constructor
        return False
    return type(made[0]) is web.BaseRequest and attributes(made[0]) == attributes(made[1])


DIRECT = _same_as_aiohttp()
make_request = direct_request if DIRECT else general_request

__all__ = ["DIRECT", "attributes", "direct_request", "general_request", "make_request"]
