"""pyop.apiserver.endpoints.plain_response builds the response aiohttp's constructor builds: the same attributes and
headers for random bodies, statuses and media types, a response of its own each time (headers not shared), and
the same bytes on the wire through the transport."""

from __future__ import annotations

import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from pyop.apiserver.endpoints import plain_response as plain

_MEDIA_TYPES = st.sampled_from(
    ["application/json", "application/yaml", "text/plain", "application/vnd.kubernetes.protobuf", "a/b+json"]
)


def test_the_direct_build_is_in_use() -> None:
    """The import-time comparison holds on this aiohttp, so the API answers take the direct build."""
    assert plain.DIRECT
    assert plain.plain_response is plain.direct_response


@settings(max_examples=300, deadline=None)
@given(body=st.binary(max_size=64), status=st.integers(100, 999), content_type=_MEDIA_TYPES)
def test_direct_equals_aiohttps_constructor(body: bytes, status: int, content_type: str) -> None:
    direct = plain.direct_response(body, status, content_type)
    general = plain.general_response(body, status, content_type)
    assert type(direct) is web.Response
    assert plain.attributes(direct) == plain.attributes(general)
    assert (direct.status, direct.reason, direct.body, direct.content_type) == (
        general.status,
        general.reason,
        general.body,
        general.content_type,
    )
    assert direct.keep_alive is general.keep_alive
    assert not direct.prepared
    assert direct.chunked == general.chunked and direct.compression == general.compression


def test_each_response_has_headers_of_its_own() -> None:
    first = plain.direct_response(b"{}", 200, "application/json")
    first.headers.add("Warning", '299 - "x"')
    second = plain.direct_response(b"{}", 200, "application/json")
    assert list(second.headers.items()) == [("Content-Type", "application/json")]
    key = web.ResponseKey("key", int)
    first[key] = 1  # a response's own state too
    assert key not in second


def test_what_the_direct_build_does_not_cover_goes_to_aiohttp() -> None:
    """A charset in the media type is aiohttp's error; a body that is no bytes is aiohttp's payload."""
    with pytest.raises(ValueError, match="charset"):
        plain.direct_response(b"", 200, "text/plain; charset=utf-8")
    with pytest.raises(ValueError, match="charset"):
        plain.general_response(b"", 200, "text/plain; charset=utf-8")
    body = bytearray(b"ab")
    direct = plain.direct_response(body, 201, "application/json")  # type: ignore[arg-type]
    general = plain.general_response(body, 201, "application/json")  # type: ignore[arg-type]
    assert plain.attributes(direct) == plain.attributes(general)


def test_a_broken_direct_build_fails_the_comparison(monkeypatch: pytest.MonkeyPatch) -> None:
    """The import-time check refuses a direct build that misses an attribute (so an aiohttp that sets one more
    falls back to its constructor)."""
    monkeypatch.setattr(plain, "_ZLIB_EXECUTOR_SIZE", plain._ZLIB_EXECUTOR_SIZE + 1)  # noqa: SLF001
    assert not plain._same_as_aiohttp()  # noqa: SLF001
