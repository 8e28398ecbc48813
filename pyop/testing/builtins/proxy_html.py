"""The links of an HTML page proxied through a `proxy` subresource, rewritten as kube-apiserver rewrites them.

k8s.io/apimachinery's proxy Transport (util/proxy/transport.go, rewriteResponse) reads a ``text/html`` answer whole,
decoding ``gzip`` or ``deflate`` (any other Content-Encoding is passed through untouched), and rewrites the URL
attributes of the tags it lists (``a href``, ``img src``, ``form action``, ... `_URL_ATTRIBUTES`) with the same rule
as a redirect's Location: an absolute path on the backend's host goes under the proxy path. Go's tokenizer
re-serializes every start tag (lower-case names, values in double quotes, escaped as html.EscapeString); every
other token is written as it came. The page is then encoded again and its Content-Length is the new one.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from html import escape
from html.parser import HTMLParser
from typing import Final

# transport.go's atomsToAttrs.
_URL_ATTRIBUTES: Final = {
    "a": {"href"},
    "applet": {"codebase"},
    "area": {"href"},
    "audio": {"src"},
    "base": {"href"},
    "blockquote": {"cite"},
    "body": {"background"},
    "button": {"formaction"},
    "command": {"icon"},
    "del": {"cite"},
    "embed": {"src"},
    "form": {"action"},
    "frame": {"longdesc", "src"},
    "head": {"profile"},
    "html": {"manifest"},
    "iframe": {"longdesc", "src"},
    "img": {"longdesc", "src", "usemap"},
    "input": {"src", "usemap", "formaction"},
    "ins": {"cite"},
    "link": {"href"},
    "object": {"classid", "codebase", "data", "usemap"},
    "q": {"cite"},
    "script": {"src"},
    "source": {"src"},
    "video": {"poster", "src"},
}


def _go_escape(value: str) -> str:
    """html.EscapeString: & ' < > " as &amp; &#39; &lt; &gt; &#34;."""
    return escape(value, quote=False).replace("'", "&#39;").replace('"', "&#34;")


class _Rewriter(HTMLParser):
    """Copies the page, re-serializing start tags with their URL attributes rewritten."""

    def __init__(self, text: str, rewrite: Callable[[str], str]) -> None:
        super().__init__(convert_charrefs=False)
        self.text, self.rewrite = text, rewrite
        self.out: list[str] = []
        self.copied = 0  # how much of the text is in ``out``
        self.line_starts = [0]
        for index, character in enumerate(text):
            if character == "\n":
                self.line_starts.append(index + 1)

    def _here(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def _tag(self, tag: str, attrs: list[tuple[str, str | None]], closing: bool) -> None:
        start = self._here()
        raw = self.get_starttag_text() or ""
        self.out.append(self.text[self.copied : start])
        urls = _URL_ATTRIBUTES.get(tag, set())
        rendered = []
        for name, value in attrs:
            value = value or ""
            if name in urls:
                value = self.rewrite(value)
            rendered.append(f' {name}="{_go_escape(value)}"')
        self.out.append(f"<{tag}{''.join(rendered)}{'/' if closing else ''}>")
        self.copied = start + len(raw)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, closing=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, closing=True)

    def result(self) -> str:
        self.feed(self.text)
        self.close()
        return "".join(self.out) + self.text[self.copied :]


def rewrite_html(body: bytes, encoding: str, rewrite: Callable[[str], str]) -> bytes | None:
    """The page with its links rewritten, in the same Content-Encoding; None when it is one kube leaves alone."""
    encoding = encoding.strip().lower()
    if encoding == "gzip":
        plain = gzip.decompress(body)
    elif encoding == "deflate":
        plain = zlib.decompress(body, -zlib.MAX_WBITS)
    elif encoding == "":
        plain = body
    else:
        return None
    page = _Rewriter(plain.decode("utf-8", "replace"), rewrite).result().encode()  # transport.go assumes UTF-8
    if encoding == "gzip":
        return gzip.compress(page)
    if encoding == "deflate":
        compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        return compressor.compress(page) + compressor.flush()
    return page


__all__ = ["rewrite_html"]
