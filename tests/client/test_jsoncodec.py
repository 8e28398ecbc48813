"""The wire JSON codec means what `json` means: same values decoded, same values encoded, same errors."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyop.client.jsoncodec import decode_json, encode_json

INT64 = st.integers(min_value=-(2**63), max_value=2**64 - 1)
SCALARS = st.none() | st.booleans() | INT64 | st.floats() | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


def same(left: Any, right: Any) -> bool:
    """Equal as JSON values, NaN included (json.dumps writes NaN for both)."""
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


@given(VALUES)
def test_decoding_gives_what_json_loads_gives(value: Any) -> None:
    document = json.dumps(value)
    assert same(decode_json(document.encode()), json.loads(document))
    assert same(decode_json(document), json.loads(document))


@given(VALUES | st.dictionaries(st.integers() | st.booleans() | st.none(), SCALARS, max_size=3))
def test_encoding_means_what_json_dumps_means(value: Any) -> None:
    assert same(json.loads(encode_json(value)), json.loads(json.dumps(value)))


@pytest.mark.parametrize(
    "document",
    [b'{"a": NaN}', b'{"a": -Infinity}', b"\xef\xbb\xbf{}", b'{"a": "\\ud800"}', b"[1e400]"],
    ids=["nan", "infinity", "bom", "lone-surrogate", "overflow"],
)
def test_documents_only_json_accepts_are_decoded_as_json_decodes_them(document: bytes) -> None:
    assert same(decode_json(document), json.loads(document))


@pytest.mark.parametrize("document", [b"", b"  ", b"nope", b'{"a": 1} tail', b"{"])
def test_non_json_is_a_value_error(document: bytes) -> None:
    with pytest.raises(ValueError):
        decode_json(document)


def test_nan_and_infinity_stay_what_json_writes_instead_of_becoming_null() -> None:
    encoded = encode_json({"spec": {"ratio": math.nan, "limit": math.inf, "gone": None}})
    assert b"NaN" in encoded and b"Infinity" in encoded
    assert json.loads(encoded)["spec"]["gone"] is None


def test_integers_beyond_64_bits_and_non_string_keys_are_encoded_as_json_does() -> None:
    assert json.loads(encode_json({"big": 2**80, 3: "three", True: "yes"})) == {
        "big": 2**80,
        "3": "three",
        "true": "yes",
    }


@dataclasses.dataclass
class Point:
    x: int


@pytest.mark.parametrize(
    "value", [datetime.datetime(2026, 1, 1), Point(1), b"bytes", {1, 2}, object()], ids=lambda v: type(v).__name__
)
def test_what_json_cannot_encode_is_still_a_type_error(value: object) -> None:
    with pytest.raises(TypeError):
        json.dumps({"v": value})
    with pytest.raises(TypeError):
        encode_json({"v": value})
