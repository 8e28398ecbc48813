"""The Content-Type Go's HTTP server gives an answer that has none: net/http's DetectContentType (sniff.go).

kube-apiserver's proxy copies a backend's headers to its ResponseWriter; when the backend named no Content-Type,
Go's server sniffs one from the first bytes of the body (the WHATWG MIME sniffing algorithm), so a client of the
`proxy` subresources sees, say, ``text/plain; charset=utf-8`` for a bare ``ok``. The common signatures are here:
HTML and XML, PDF and PostScript, the Unicode byte-order marks, the image, media and archive formats Go lists (not MP4,
MP3 frames or fonts), and the text/binary decision; an unknown binary is ``application/octet-stream``.
"""

from __future__ import annotations

from typing import Final

_WHITESPACE: Final = b"\t\n\x0c\r "
_HTML_TAGS: Final = (
    b"<!DOCTYPE HTML",
    b"<HTML",
    b"<HEAD",
    b"<SCRIPT",
    b"<IFRAME",
    b"<H1",
    b"<DIV",
    b"<FONT",
    b"<TABLE",
    b"<A",
    b"<STYLE",
    b"<TITLE",
    b"<B",
    b"<BODY",
    b"<BR",
    b"<P",
    b"<!--",
)
# Exact prefixes, in sniff.go's order after the HTML and XML signatures.
_PREFIXES: Final = (
    (b"%PDF-", "application/pdf"),
    (b"%!PS-Adobe-", "application/postscript"),
    (b"\xfe\xff", "text/plain; charset=utf-16be"),
    (b"\xff\xfe", "text/plain; charset=utf-16le"),
    (b"\xef\xbb\xbf", "text/plain; charset=utf-8"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
    (b"\x00\x00\x02\x00", "image/x-icon"),
    (b"BM", "image/bmp"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"FORM", "audio/aiff"),
    (b"ID3", "audio/mpeg"),
    (b"OggS\x00", "application/ogg"),
    (b"MThd\x00\x00\x00\x06", "audio/midi"),
    (b"\x1a\x45\xdf\xa3", "video/webm"),
    (b"Rar!\x1a\x07\x00", "application/x-rar-compressed"),
    (b"Rar!\x1a\x07\x01\x00", "application/x-rar-compressed"),
    (b"\x00asm", "application/wasm"),
    (b"\x1f\x8b\x08", "application/x-gzip"),
    (b"PK\x03\x04", "application/zip"),
)
_BINARY: Final = frozenset([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])


def detect_content_type(data: bytes) -> str:
    """DetectContentType of (at most) the first 512 bytes."""
    data = data[:512]
    stripped = data.lstrip(_WHITESPACE)
    upper = stripped.upper()
    for tag in _HTML_TAGS:
        if upper.startswith(tag) and len(stripped) > len(tag) and stripped[len(tag)] in b" >":
            return "text/html; charset=utf-8"
    if stripped.startswith(b"<?xml"):
        return "text/xml; charset=utf-8"
    for prefix, content_type in _PREFIXES:
        if data.startswith(prefix):
            return content_type
    if data[:4] == b"RIFF" and data[8:14] == b"WEBPVP":
        return "image/webp"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wave"
    if data[:4] == b"RIFF" and data[8:12] == b"AVI ":
        return "video/avi"
    if not any(byte in _BINARY for byte in data):
        return "text/plain; charset=utf-8"
    return "application/octet-stream"


__all__ = ["detect_content_type"]
