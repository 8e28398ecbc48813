"""pyop.apiserver.endpoints.request_parts gives aiohttp's answers: the same raw request is parsed twice by aiohttp's
own parser, and the shortcut's answer for one copy is compared with aiohttp's general accessor for the other
(`BaseRequest.read`, `BaseRequest.content_type`, and handlers.write_options over `request.query`), for bodies whole,
chunked, still arriving, over the size limit or partly read, and for random Content-Type headers and queries."""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.http import HttpRequestParser
from aiohttp.http_writer import StreamWriter
from aiohttp.web_protocol import RequestPayloadError
from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.api.status import ApiError
from pyop.apiserver.endpoints import handlers, request_parts
from pyop.apiserver.endpoints.transport import LeanServer


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def _requests(
    loop: asyncio.AbstractEventLoop, data: bytes, *, copies: int = 2, max_size: int = 1024, tail: bytes = b""
) -> list[web.BaseRequest]:
    """``copies`` requests parsed from the same bytes (``tail``: more of the body fed after the head was parsed)."""
    requests = []
    for _ in range(copies):
        protocol = LeanServer(lambda request: None, loop=loop, access_log=None)()  # type: ignore[arg-type, return-value]
        parser = HttpRequestParser(
            protocol, loop, 2**16, max_line_size=8190, max_field_size=8190, payload_exception=RequestPayloadError
        )
        messages, _, _ = parser.feed_data(data)
        message, payload = messages[0]
        writer = StreamWriter(protocol, loop)
        request = web.BaseRequest(message, payload, protocol, writer, None, loop, client_max_size=max_size)  # type: ignore[arg-type]
        if tail:
            loop.call_soon(parser.feed_data, tail)
        requests.append(request)
    return requests


def _head(headers: str = "", *, path: str = "/apis/g/v1/things", length: int | None = None) -> bytes:
    content_length = f"Content-Length: {length}\r\n" if length is not None else ""
    return f"PATCH {path} HTTP/1.1\r\nHost: x\r\n{headers}{content_length}\r\n".encode()


def _outcome(loop: asyncio.AbstractEventLoop, awaitable: Any) -> tuple[str, Any]:
    try:
        return "value", loop.run_until_complete(awaitable)
    except Exception as error:  # the same error class and text on both sides
        return type(error).__name__, str(error)


def _raised(read: Any) -> tuple[str, Any]:
    try:
        return "value", read()
    except Exception as error:
        return type(error).__name__, str(error)


def _both_reads(loop: asyncio.AbstractEventLoop, requests: list[web.BaseRequest]) -> None:
    shortcut, general = requests
    fast = _outcome(loop, request_parts.request_body(shortcut))
    slow = _outcome(loop, general.read())
    assert fast == slow
    assert shortcut.content.is_eof() == general.content.is_eof()
    assert shortcut.content.at_eof() == general.content.at_eof()  # the connection is reused alike
    if fast[0] == "value":
        assert _outcome(loop, shortcut.read()) == fast  # a later read() gives the same bytes


@settings(max_examples=150, deadline=None)
@given(body=st.binary(max_size=2048))
def test_a_whole_body_reads_as_aiohttp_reads_it(loop: asyncio.AbstractEventLoop, body: bytes) -> None:
    """Bodies up to twice the size limit: under it the bytes, over it the same 413."""
    _both_reads(loop, _requests(loop, _head(length=len(body)) + body))


@settings(max_examples=60, deadline=None)
@given(chunks=st.lists(st.binary(min_size=1, max_size=300), max_size=6))
def test_a_chunked_body_reads_as_aiohttp_reads_it(loop: asyncio.AbstractEventLoop, chunks: list[bytes]) -> None:
    encoded = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks) + b"0\r\n\r\n"
    _both_reads(loop, _requests(loop, _head("Transfer-Encoding: chunked\r\n") + encoded))


@settings(max_examples=60, deadline=None)
@given(body=st.binary(min_size=2, max_size=900), split=st.integers(min_value=1))
def test_a_body_still_arriving_reads_as_aiohttp_reads_it(
    loop: asyncio.AbstractEventLoop, body: bytes, split: int
) -> None:
    """The parser has seen the head and part of the body; the rest arrives while the read waits."""
    cut = 1 + split % (len(body) - 1)
    requests = _requests(loop, _head(length=len(body)) + body[:cut], tail=body[cut:])
    assert not requests[0].content.is_eof()
    _both_reads(loop, requests)


def test_a_body_partly_read_already_reads_as_aiohttp_reads_it(loop: asyncio.AbstractEventLoop) -> None:
    body = b"0123456789" * 50
    requests = _requests(loop, _head(length=len(body)) + body)
    for request in requests:
        assert loop.run_until_complete(request.content.read(7)) == b"0123456"
    _both_reads(loop, requests)


def test_no_body_reads_as_aiohttp_reads_it(loop: asyncio.AbstractEventLoop) -> None:
    _both_reads(loop, _requests(loop, _head()))
    _both_reads(loop, _requests(loop, _head(length=0)))


@pytest.mark.parametrize("size", [1023, 1024, 1025, 4000])
def test_a_body_at_and_over_the_size_limit_reads_as_aiohttp_reads_it(
    loop: asyncio.AbstractEventLoop, size: int
) -> None:
    """The limit is 1024 bytes: over it, aiohttp's 413 (HTTPRequestEntityTooLarge)."""
    body = b"y" * size
    _both_reads(loop, _requests(loop, _head(length=size) + body))


def test_a_body_over_an_unlimited_size_reads_whole(loop: asyncio.AbstractEventLoop) -> None:
    body = b"x" * 5000
    _both_reads(loop, _requests(loop, _head(length=len(body)) + body, max_size=0))


_HEADER_TEXT = st.text(
    alphabet=st.sampled_from(list('abcdefghijklmnopqrstuvwxyzAJY/+-.;= "*\t,') + ["\u00e9"]), max_size=40
)
_MEDIA = st.one_of(
    _HEADER_TEXT,
    st.sampled_from(
        [
            "application/json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
            "Application/JSON; charset=utf-8",
            'application/json; charset="utf-8"',
            " application/json-patch+json ",
            "application/strategic-merge-patch+json;x=y",
            "text/plain;",
            "",
        ]
    ),
)


@settings(max_examples=200, deadline=None)
@given(raw=st.one_of(st.none(), _MEDIA))
def test_media_type_is_aiohttps_content_type(loop: asyncio.AbstractEventLoop, raw: str | None) -> None:
    headers = "" if raw is None else f"Content-Type: {raw}\r\n"
    try:
        data = _head(headers.encode("utf-8").decode("latin-1"))
    except UnicodeError:
        return
    for _ in range(2):  # the second time from what it remembered
        shortcut, general = _requests(loop, data)
        # a header the e-mail parser underneath chokes on raises alike (a 500 either way)
        assert _raised(lambda: request_parts.media_type(shortcut)) == _raised(lambda: general.content_type)  # noqa: B023


_QUERY_NAMES = st.sampled_from(["dryRun", "fieldManager", "force", "fieldValidation", "dryrun", "watch", "x"])
_QUERY_VALUES = st.one_of(
    st.sampled_from(["All", "all", "", "true", "false", "0", "1", "Strict", "Warn", "Ignore", "strict", "a b", "é"]),
    st.text(max_size=8),
)


def _general_write_options(request: web.BaseRequest) -> tuple[Any, ...]:
    """handlers.write_options as it read the query before the shortcut (request.query, every time)."""
    query = request.query
    dry_run = query.getall("dryRun", [])
    for value in dry_run:
        if value != "All":
            raise ApiError(400, f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return (
        bool(dry_run),
        query.get("fieldManager", ""),
        handlers.query_bool(query, "force"),
        handlers.field_validation(query),
        (request.headers.get("User-Agent", "").split("/")[0] or "unknown"),
    )


def _options_outcome(read: Any) -> tuple[str, Any]:
    try:
        return "value", read()
    except ApiError as error:
        return "error", (error.code, error.to_status()["message"])


@settings(max_examples=300, deadline=None)
@given(
    pairs=st.lists(st.tuples(_QUERY_NAMES, _QUERY_VALUES), max_size=4),
    encode=st.booleans(),
    agent=st.sampled_from(["", "kubectl/v1.31.0 (linux/amd64)", "/x", "Python/3.11 aiohttp/3"]),
)
def test_write_options_read_the_query_as_before(
    loop: asyncio.AbstractEventLoop, pairs: list[tuple[str, str]], encode: bool, agent: str
) -> None:
    query = (
        urllib.parse.urlencode(pairs)
        if encode
        else "&".join(f"{name}={urllib.parse.quote(value, safe='=&+')}" for name, value in pairs)
    )
    path = "/apis/g/v1/things" + (f"?{query}" if pairs else "")
    headers = f"User-Agent: {agent}\r\n" if agent else ""
    for _ in range(2):  # the second time from what it remembered
        shortcut, general = _requests(loop, _head(headers, path=path))
        expected = _options_outcome(lambda: _general_write_options(general))  # noqa: B023

        def fast() -> tuple[Any, ...]:
            options = handlers.write_options(shortcut)  # noqa: B023
            fields = (options.dry_run, options.field_manager, options.force, options.field_validation)
            return (*fields, options.default_manager)

        assert _options_outcome(fast) == expected
