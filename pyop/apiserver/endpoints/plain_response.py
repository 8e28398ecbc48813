"""`plain_response`: the `web.Response` of a bytes body with a lone Content-Type, built without `Response.__init__`.

Why: every API answer is such a response (a JSON body, a status), and aiohttp's constructor spends ~1.3 µs on
arguments an API answer never uses (text, charset, a headers argument copied, the Content-Type set through the
case-insensitive multidict with its checks), the largest single step of the handler chain around the registry.
Here the object aiohttp's constructor would make is made directly: its attributes set as `Response.__init__` sets
them, the headers copied from one remembered multidict per media type, the reason phrase of each status taken
once from aiohttp itself.

Exactly aiohttp's answer: at import the direct build is compared with aiohttp's own (`web.Response(body=...,
status=..., content_type=...)`) attribute by attribute; when an aiohttp version sets other attributes the
general constructor is used instead (tests/generic_apiserver/test_plain_response.py compares the two for random
bodies, statuses and media types, and the transport's byte tests send both).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from multidict import CIMultiDict

_LIMIT = 64  # media types and statuses remembered: a server answers with a handful
_HEADERS: dict[str, CIMultiDict[str]] = {}  # media type -> the headers aiohttp's constructor makes for it
_REASONS: dict[int, str] = {}  # status -> aiohttp's reason phrase
_new = object.__new__
_ZLIB_EXECUTOR_SIZE: Any = web.Response()._zlib_executor_size  # noqa: SLF001 - aiohttp's default, not a copy of it


def general_response(body: bytes, status: int, content_type: str) -> web.Response:
    """aiohttp's own constructor: the reference, and the path of anything the direct build does not cover."""
    return web.Response(body=body, status=status, content_type=content_type)


def _template(status: int, content_type: str) -> tuple[CIMultiDict[str], str] | None:
    """The headers and reason aiohttp gives such a response, remembered; None when not to remember them."""
    headers = _HEADERS.get(content_type)
    reason = _REASONS.get(status)
    if headers is None or reason is None:
        if len(_HEADERS) >= _LIMIT or len(_REASONS) >= _LIMIT or "charset" in content_type:
            return None  # aiohttp refuses a charset in content_type: its error, from its constructor
        made = general_response(b"", status, content_type)
        headers, reason = made._headers, made._reason  # noqa: SLF001 - what the constructor set
        _HEADERS[content_type], _REASONS[status] = headers, reason
    return headers, reason


def direct_response(body: bytes, status: int, content_type: str) -> web.Response:
    """The response `general_response` makes, attribute for attribute, without its argument handling."""
    template = _template(status, content_type) if type(status) is int and type(body) is bytes else None
    if template is None:
        return general_response(body, status, content_type)
    headers, reason = template
    response: web.Response = _new(web.Response)
    response._state = {}  # noqa: SLF001 - as StreamResponse.__init__
    response._headers = headers.copy()  # noqa: SLF001
    response._status = status  # noqa: SLF001 - as _set_status with no reason given
    response._reason = reason  # noqa: SLF001
    response._body = body  # noqa: SLF001 - as the body setter for bytes
    response._compressed_body = None  # noqa: SLF001
    response._zlib_executor_size = _ZLIB_EXECUTOR_SIZE  # noqa: SLF001 - the constructor's defaults
    response._zlib_executor = None  # noqa: SLF001
    return response


def attributes(response: web.StreamResponse) -> dict[str, Any]:
    """A response's state as comparable values: its attributes, the headers as their (name, value) list."""
    state = dict(vars(response))
    state["_headers"] = (type(state["_headers"]), list(state["_headers"].items()))
    return state


def _same_as_aiohttp() -> bool:
    """Whether the direct build gives aiohttp's response for samples (else this aiohttp sets other attributes)."""
    samples = ((b'{"kind":"Status"}', 404, "application/json"), (b"{}", 200, "application/json"))
    try:
        return all(
            type(direct_response(*sample)) is web.Response
            and attributes(direct_response(*sample)) == attributes(general_response(*sample))
            for sample in samples
        )
    except Exception:  # noqa: BLE001 - any surprise means: use aiohttp's constructor
        return False


DIRECT = _same_as_aiohttp()
plain_response = direct_response if DIRECT else general_response

__all__ = ["DIRECT", "attributes", "direct_response", "general_response", "plain_response"]
