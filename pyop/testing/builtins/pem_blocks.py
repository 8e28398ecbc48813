"""PEM blocks as Go's ``encoding/pem.Decode`` finds them, one call after another: what kube-apiserver's CSR
validation reads (the request: the first block only; the issued certificate: every block, csr_request and
csr_certificate).

Text before a block is skipped; a block whose end line is missing or names another type, or whose body is not
base64, is passed over and the search goes on after its BEGIN line; ``Key: value`` lines right after the BEGIN line
are the block's headers (RFC 1421), which kube refuses in a certificate.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

_BEGIN: Final = re.compile(rb"-----BEGIN ([^\r\n]*)-----[ \t]*\r?\n")


@dataclass(frozen=True)
class PemBlock:
    type: bytes
    headers: dict[bytes, bytes]
    data: bytes


def pem_blocks(data: bytes) -> Iterator[PemBlock]:
    """Every well-formed block of ``data`` in order, as repeated ``pem.Decode(rest)`` calls return them."""
    position = 0
    while (begin := _BEGIN.search(data, position)) is not None:
        kind = begin.group(1)
        end_marker = b"-----END " + kind + b"-----"
        end = data.find(end_marker, begin.end())
        if end < 0:
            position = begin.end()
            continue
        headers, body = _headers(data[begin.end() : end])
        try:
            decoded = base64.b64decode(b"".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            position = begin.end()
            continue
        position = end + len(end_marker)
        yield PemBlock(kind, headers, decoded)


def _headers(body: bytes) -> tuple[dict[bytes, bytes], bytes]:
    """The leading ``Key: value`` lines (Go stops at the first line without a colon) and the rest."""
    headers: dict[bytes, bytes] = {}
    lines = body.split(b"\n")
    index = 0
    while index < len(lines) and b":" in lines[index]:
        key, _, value = lines[index].partition(b":")
        headers[key.strip()] = value.strip()
        index += 1
    return headers, b"\n".join(lines[index:])


__all__ = ["PemBlock", "pem_blocks"]
