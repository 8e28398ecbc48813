"""Deterministic YAML for generated manifests: sorted keys, block style, multi-line strings as literal blocks.

Keys are sorted everywhere, which is also the order controller-gen's output has, so diffs against Kubebuilder
projects stay small and the same models always give byte-identical files. A string that would read back as
another type when written plain (`""`, `"true"`, `"1"`) is double-quoted, as controller-gen's YAML library
(go-yaml) quotes it, so that a core API group is `- ""` in both tools' output.

PyYAML's representer and serializer (pure Python, generic, alias-tracking, a resolver call per scalar) cost five
times what libyaml's emitter does on a large CRD; manifests are plain JSON-like data, so `_Writer` turns it into
emitter events in one walk and the library still does quoting, escaping and layout.

CRDs repeat large subtrees (every kind embedding a PodTemplateSpec carries the same 400 kB of schema), so a large
mapping value is written once, as a document of its own, and its text is reused wherever the same content comes
again: libyaml lays out a block collection relative to its indentation, so the text of a value under a key at
column `n` is the document's text with every non-empty line shifted right by `n + 2` (a mapping) or `n` (a
sequence, written indentless under a key). That holds where the width never folds a line and no scalar keeps
trailing line breaks (`|+`, which changes how the document ends); text that could break it is never reused, nor
is any text in a stream with such a block.
"""

from __future__ import annotations

import functools
import io
import marshal
import re
import secrets
from typing import Any, Final

import yaml

# libyaml's emitter when PyYAML was built with it: ten times faster, same output.
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:  # type: ignore[name-defined]
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=_quoting(value))


def _quoting(text: str) -> str | None:
    """go-yaml's choice: double quotes where the plain text would read as another type; otherwise the emitter
    decides (plain, or single quotes where YAML syntax forbids plain)."""
    return '"' if _plain_tag(text) in _GO_YAML_TYPED else None


_Dumper.add_representer(str, _str)

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_RESOLVER = yaml.resolver.Resolver()
# The types go-yaml also reads plain text as (not PyYAML's `!`/`&`/`*` and `=` tags: go-yaml reads those as
# strings and its emitter single-quotes `*x` for syntax, as PyYAML's does).
_GO_YAML_TYPED: Final = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "timestamp", "merge")
)
_WIDTH: Final = 4096

# Reuse: values smaller than this (marshalled) are cheaper to write than to look up; lines longer than this could
# be folded at the width once shifted; keys longer than this could stop being simple keys (`? key`).
_MIN_REUSED_BYTES: Final = 16 << 10
_MAX_REUSED_LINE: Final = _WIDTH - 1024
_MAX_SIMPLE_KEY: Final = 64
_TOKEN: Final = f"pyop{secrets.token_hex(8)}x"  # placeholder scalars: `<token><n>z`, a plain scalar read as str
_KEY_COLUMN: Final = re.compile(r"(?: *- )* *")  # before a key on its line: indentation and sequence dashes
_KEEP_CHOMPING: Final = re.compile(r"\|[1-9]?\+$", re.MULTILINE)
_OTHER_LINE_BREAKS: Final = ("\r", "\x85", "\u2028", "\u2029")

# Marshalled values seen once, and those seen again -> their texts as documents (None: not reusable); kept across
# calls, dropped together when too large.
_SEEN: set[bytes] = set()
_TEXTS: dict[bytes, str | None] = {}
_SHIFTED: dict[tuple[str, int], str] = {}  # (text, shift) -> the shifted text: the same value, the same place
_MAX_TEXT_CHARS: Final = 64 << 20
_text_chars = 0


@functools.lru_cache(maxsize=1 << 16)
def _plain_tag(text: str) -> str:
    """The tag a plain (unquoted) scalar `text` would be read as; the emitter quotes a string read as another."""
    return _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-any-return]


def _scalar_event(tag: str, text: str, style: str | None) -> Any:
    if style is None and tag == _STR:
        style = _quoting(text)
    return yaml.ScalarEvent(None, tag, (tag == _plain_tag(text), tag == _STR), text, style=style)


def _str_event(text: str) -> Any:
    """The event of a string; short ones (keys, types, formats) are made once and emitted again and again."""
    event = _scalar_event(_STR, text, "|" if "\n" in text else None)
    if len(text) <= _MAX_SHARED_EVENT_TEXT:
        if len(_STR_EVENTS) >= _MAX_SHARED_EVENTS:
            _STR_EVENTS.clear()
        _STR_EVENTS[text] = event
    return event


# Events carry no position and the emitter only reads them, so equal events are one object.
_MAPPING_START: Final = yaml.MappingStartEvent(None, _MAP, True, flow_style=False)
_MAPPING_END: Final = yaml.MappingEndEvent()
_SEQUENCE_START: Final = yaml.SequenceStartEvent(None, _SEQ, True, flow_style=False)
_SEQUENCE_END: Final = yaml.SequenceEndEvent()
_TRUE: Final = yaml.ScalarEvent(None, _BOOL, (True, False), "true")
_FALSE: Final = yaml.ScalarEvent(None, _BOOL, (True, False), "false")
_NULL_EVENT: Final = yaml.ScalarEvent(None, _NULL, (True, False), "null")
_STR_EVENTS: dict[str, Any] = {}
_MAX_SHARED_EVENT_TEXT: Final = 80
_MAX_SHARED_EVENTS: Final = 1 << 16


def _new_dumper(stream: io.StringIO) -> Any:
    return _Dumper(stream, default_flow_style=False, sort_keys=True, width=_WIDTH, allow_unicode=True)


class _Writer:
    """Emits one stream's events, with placeholders for reused values, and splices their texts in afterwards."""

    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream
        self.dumper = _new_dumper(stream)
        self.emit = self.dumper.emit
        self.spliced: list[tuple[str, bool]] = []  # (text, is a sequence) per placeholder, in document order

    def value(self, value: Any, reuse: bool = False) -> None:
        """Emit the events PyYAML's Serializer would emit for the node its SafeRepresenter makes of `value`.

        Sorted keys, block style, `|` for multi-line strings. Manifests are plain JSON-like data, so this walks
        the data once instead of representing it as nodes first; the libyaml emitter still does quoting and layout.
        With `reuse`, large mapping values seen before are written as placeholders for their texts.
        """
        kind = type(value)
        emit = self.emit
        if kind is str:
            emit(_STR_EVENTS.get(value) or _str_event(value))
        elif kind is dict:
            emit(_MAPPING_START)
            for key, item in sorted(value.items()):
                if type(key) is str:
                    emit(_STR_EVENTS.get(key) or _str_event(key))
                else:
                    self.value(key)
                if reuse and type(item) in (dict, list) and item and type(key) is str:
                    text, large = _reusable_text(item, key)
                    if text is not None:
                        emit(yaml.ScalarEvent(None, _STR, (True, True), f"{_TOKEN}{len(self.spliced)}z"))
                        self.spliced.append((text, type(item) is list))
                        continue
                    self.value(item, large)  # inside a small value every value is smaller still
                else:
                    self.value(item, reuse)
            emit(_MAPPING_END)
        elif kind is list:
            emit(_SEQUENCE_START)
            for item in value:
                self.value(item, reuse)
            emit(_SEQUENCE_END)
        elif kind is bool:
            emit(_TRUE if value else _FALSE)
        elif kind is int:
            emit(_scalar_event(_INT, str(value), None))
        elif value is None:
            emit(_NULL_EVENT)
        else:
            node = self.dumper.represent_data(value)  # floats and anything rarer: the library's own representation
            if not isinstance(node, yaml.ScalarNode):
                raise TypeError(f"cannot write {type(value).__name__} into a manifest")
            emit(_scalar_event(node.tag, node.value, node.style))

    def text(self) -> str | None:
        """The stream's text with the reused values spliced in; None if a placeholder did not land as expected."""
        written = self.stream.getvalue()
        if not self.spliced:
            return written
        if written.count(_TOKEN) != len(self.spliced):
            return None  # the data itself holds a placeholder's text: write it without reuse
        if _KEEP_CHOMPING.search(written):
            # A `|+` block leaves the emitter "open ended" until the next block scalar, which a placeholder would
            # hide from it: whether `...` follows at the end would change.
            return None
        pieces: list[str] = []
        start = 0
        for number, (text, is_sequence) in enumerate(self.spliced):
            token = f": {_TOKEN}{number}z\n"
            at = written.find(token, start)
            if at < 0:
                return None
            line_start = written.rfind("\n", 0, at) + 1
            key_column = _KEY_COLUMN.match(written, line_start, at)
            assert key_column is not None  # the pattern matches the empty string
            shift = key_column.end() - line_start + (0 if is_sequence else 2)
            pieces.append(written[start:at])
            pieces.append(":\n")
            pieces.append(_shifted(text, shift))
            start = at + len(token)
        pieces.append(written[start:])
        return "".join(pieces)


def _shifted(text: str, shift: int) -> str:
    """`text` with each non-empty line indented `shift` more (empty lines in literal blocks stay empty)."""
    if not shift:
        return text
    found = _SHIFTED.get((text, shift))
    if found is None:
        found = _SHIFTED[(text, shift)] = _shift(text, shift)
    return found


def _shift(text: str, shift: int) -> str:
    pad = " " * shift
    shifted = pad + text[:-1].replace("\n", "\n" + pad) + "\n"  # text ends with its last line's break
    empty = "\n" + pad + "\n"
    while empty in shifted:  # runs of empty lines need one pass per overlapping pair
        shifted = shifted.replace(empty, "\n\n")
    return shifted


def _reusable_text(value: dict[Any, Any] | list[Any], key: str) -> tuple[str | None, bool]:
    """(The text of `value` as a document of its own if it was seen before and is reusable, whether `value` is
    large enough to look for reusable values inside it)."""
    if len(key) > _MAX_SIMPLE_KEY or not key.isprintable():
        return None, True
    try:
        blob = marshal.dumps(value)
    except ValueError:  # not plain data: written the usual way (which refuses what it cannot write)
        return None, False
    if len(blob) < _MIN_REUSED_BYTES:
        return None, False
    if blob in _TEXTS:
        return _TEXTS[blob], True
    if blob not in _SEEN:  # a value seen once is written in place: most are never seen again
        _remember(blob, None, first_sighting=True)
        return None, True
    text = _document_text(value)
    _remember(blob, text, first_sighting=False)
    return text, True


def _document_text(value: Any) -> str | None:
    stream = io.StringIO()
    writer = _Writer(stream)
    writer.emit(yaml.StreamStartEvent())
    writer.emit(yaml.DocumentStartEvent(explicit=False))
    writer.value(value, True)
    writer.emit(yaml.DocumentEndEvent(explicit=False))
    writer.emit(yaml.StreamEndEvent())
    text = writer.text()
    if (
        text is None
        or text.startswith("---")
        or text.endswith("...\n")
        or _KEEP_CHOMPING.search(text)
        or any(mark in text for mark in _OTHER_LINE_BREAKS)
        or max(map(len, text.split("\n"))) > _MAX_REUSED_LINE
    ):
        return None
    return text


def _remember(blob: bytes, text: str | None, *, first_sighting: bool) -> None:
    global _text_chars
    if _text_chars > _MAX_TEXT_CHARS:
        _TEXTS.clear()
        _SEEN.clear()
        _SHIFTED.clear()
        _text_chars = 0
    if first_sighting:
        _SEEN.add(blob)
    else:
        _TEXTS[blob] = text
    _text_chars += len(blob) + (len(text) if text else 0)


def dump_documents(documents: list[Any], header: str = "") -> str:
    """Each document after `---`, as controller-gen writes them."""
    text = _dump(documents, header, reuse=True)
    if text is None:
        text = _dump(documents, header, reuse=False)
        assert text is not None  # nothing to splice, nothing to miss
    return text


def _dump(documents: list[Any], header: str, *, reuse: bool) -> str | None:
    stream = io.StringIO()
    stream.write(header)
    writer = _Writer(stream)
    writer.emit(yaml.StreamStartEvent())
    for document in documents:
        writer.emit(yaml.DocumentStartEvent(explicit=True))
        writer.value(document, reuse)
        writer.emit(yaml.DocumentEndEvent(explicit=False))
    writer.emit(yaml.StreamEndEvent())
    return writer.text()
