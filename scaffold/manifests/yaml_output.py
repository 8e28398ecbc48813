"""Deterministic YAML for generated manifests: sorted keys, block style, multi-line strings as literal blocks.

Keys are sorted everywhere, which is also the order controller-gen's output has, so diffs against Kubebuilder
projects stay small and the same models always give byte-identical files.

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
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_RESOLVER = yaml.resolver.Resolver()
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
    text = _TextWriter.dump(documents, header)
    if text is None:
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


# -- block layout written directly ------------------------------------------------------------------------------------

# A scalar's text as a block mapping value or sequence item: (the text after `key: ` or `- `, then the lines of a
# literal block as written under a key at column 0, or None), or None where the layout could depend on the place
# (a line that could fold at the width, a `|+` block, an unusual line break). Strings by value, other scalars by
# type and value (`1`, `1.0` and `True` apart, `0.0` and `-0.0` too); a key's text only where it is a simple key.
_Rendered = tuple[str, str | None]
_STR_TEXTS: dict[str, _Rendered | None] = {}
_OTHER_TEXTS: dict[tuple[type, Any], _Rendered | None] = {}
_KEY_TEXTS: dict[str, str | None] = {}
_MAX_RENDERED_TEXT: Final = 2048  # at most this long and at most _MAX_INDENT in: no line comes near the width
_MAX_INDENT: Final = 1024


class _TextWriter:
    """Writes a stream's block layout itself and has libyaml render each distinct scalar, once per process.

    Feeding libyaml an event per scalar and collection was most of the cost of writing manifests, and the layout
    of block collections is simple: `key:` and the value per line, nested mappings two columns in, sequences
    under a key at the key's column, `{}` and `[]` for empty collections, a mapping in a sequence starting on the
    `- ` line. What libyaml decides is each scalar's text (plain or quoted, escapes, literal blocks), which does
    not depend on where the scalar sits as long as no line comes near the width and no scalar keeps trailing
    breaks (`|+`); a literal block's lines move with the key's column, as reused texts do. The rest (documents
    that are not mappings, keys that are not short strings, a collection right inside a sequence, a literal block
    as a sequence item, other data types) is left to the event writer: `dump` returns None.
    """

    def __init__(self) -> None:
        self.out: list[str] = []
        self.holes: list[tuple[int, Any, int, bool]] = []  # (index in out, scalar, key column, after a key)

    @classmethod
    def dump(cls, documents: list[Any], header: str) -> str | None:
        if len(_STR_TEXTS) + len(_OTHER_TEXTS) > _MAX_SHARED_EVENTS:  # between streams: no hole awaits a text
            _STR_TEXTS.clear()
            _OTHER_TEXTS.clear()
            _KEY_TEXTS.clear()
        writer = cls()
        writer.out.append(header)
        for document in documents:
            if type(document) is not dict or not document:
                return None
            writer.out.append("---\n")
            if not writer.mapping(document, 0, "", True):
                return None
        if not writer.fill_holes():
            return None
        return "".join(writer.out)

    def mapping(self, value: dict[Any, Any], column: int, prefix: str, reuse: bool) -> bool:
        """Write a non-empty mapping with its keys at `column`, the first line starting with `prefix`."""
        if column > _MAX_INDENT:
            return False
        out = self.out
        pad = " " * column
        for key, item in sorted(value.items()):
            key_text = _KEY_TEXTS.get(key) if type(key) is str else None
            if key_text is None:
                key_text = _key_text(key, value)
                if key_text is None:
                    return False
            kind = type(item)
            if kind is str:
                rendered = _STR_TEXTS.get(item)
                if rendered is not None and rendered[1] is None:
                    out.append(f"{prefix}{key_text}: {rendered[0]}\n")
                    prefix = pad
                    continue
            if kind is dict or kind is list:
                if not item:
                    out.append(f"{prefix}{key_text}: {{}}\n" if kind is dict else f"{prefix}{key_text}: []\n")
                    prefix = pad
                    continue
                out.append(f"{prefix}{key_text}:\n")
                prefix = pad
                large = reuse
                if reuse:
                    text, large = _reusable_text(item, key)
                    if text is not None:
                        out.append(_shifted(text, column if kind is list else column + 2))
                        continue
                if kind is dict:
                    if not self.mapping(item, column + 2, pad + "  ", large):
                        return False
                elif not self.sequence(item, column, large):
                    return False
                continue
            out.append(f"{prefix}{key_text}:")
            prefix = pad
            if not self.scalar(item, column, True):
                return False
        return True

    def sequence(self, value: list[Any], column: int, reuse: bool) -> bool:
        out = self.out
        dash = " " * column + "- "
        for item in value:
            kind = type(item)
            if kind is dict:
                if not item:
                    out.append(dash + "{}\n")
                elif not self.mapping(item, column + 2, dash, reuse):
                    return False
            elif kind is list:
                if item:
                    return False  # a sequence right inside a sequence (`- - x`): left to the event writer
                out.append(dash + "[]\n")
            else:
                out.append(dash[:-1])
                if not self.scalar(item, column, False):
                    return False
        return True

    def scalar(self, value: Any, column: int, after_key: bool) -> bool:
        """Write ` <text>` and its line break (and a literal block's lines) for a scalar, now or once rendered."""
        kind = type(value)
        if kind is str:
            rendered = _STR_TEXTS.get(value, _PENDING)
        elif kind is int or kind is bool or kind is float or value is None:
            rendered = _OTHER_TEXTS.get(_other_key(value), _PENDING)
        else:
            return False
        if rendered is _PENDING:
            self.holes.append((len(self.out), value, column, after_key))
            self.out.append("")
            return True
        text = _placed(rendered, column, after_key)  # type: ignore[arg-type]
        self.out.append(text or "")
        return text is not None

    def fill_holes(self) -> bool:
        if not self.holes:
            return True
        _render([value for _, value, _, _ in self.holes])
        for at, value, column, after_key in self.holes:
            rendered = _STR_TEXTS[value] if type(value) is str else _OTHER_TEXTS[_other_key(value)]
            text = _placed(rendered, column, after_key)
            if text is None:
                return False
            self.out[at] = text
        return True


_PENDING: Final[Any] = object()


def _placed(rendered: _Rendered | None, column: int, after_key: bool) -> str | None:
    if rendered is None:
        return None
    line, block = rendered
    if block is None:
        return f" {line}\n"
    if not after_key:
        return None  # a literal block as a sequence item
    shifted = _shifted(block, column)
    if block.startswith("\n"):
        shifted = shifted[column:]  # an empty first line stays empty, as the others do
    return f" {line}\n{shifted}"


def _key_text(key: Any, mapping: dict[Any, Any]) -> str | None:
    """The text of a mapping key where libyaml writes it as a simple key (`key:`, not `? key`), the same single
    line as a value (the mapping's other new keys are rendered with it)."""
    if type(key) is not str:
        return None
    if key not in _KEY_TEXTS:
        new_keys = [name for name in mapping if type(name) is str and name not in _KEY_TEXTS]
        _render([name for name in new_keys if _simple_key(name)])
        for name in new_keys:
            rendered = _STR_TEXTS.get(name) if _simple_key(name) else None
            _KEY_TEXTS[name] = rendered[0] if rendered is not None and rendered[1] is None else None
    return _KEY_TEXTS[key]


def _simple_key(key: str) -> bool:
    """libyaml's test, on the safe side: not empty, no line break, at most 128 bytes (and _MAX_SIMPLE_KEY)."""
    return (
        0 < len(key) <= _MAX_SIMPLE_KEY
        and len(key.encode("utf-8", "surrogatepass")) <= 128
        and not any(mark in key for mark in _KEY_LINE_BREAKS)
    )


_KEY_LINE_BREAKS: Final = ("\n", *_OTHER_LINE_BREAKS)


def _other_key(value: Any) -> tuple[type, Any]:
    kind = type(value)
    return (kind, repr(value)) if kind is float else (kind, value)


def _render(values: list[Any]) -> None:
    """Render the scalars not rendered yet with libyaml, all in one document (a `k<n>: <value>` entry each)."""
    pending: dict[Any, Any] = {}
    for value in values:
        if type(value) is str:
            if value not in _STR_TEXTS:
                pending[value] = value
        elif (key := _other_key(value)) not in _OTHER_TEXTS:
            pending[key] = value
    if not pending:
        return
    texts = _rendered_texts([_event_of(value) for value in pending.values()])
    for (key, value), rendered in zip(pending.items(), texts, strict=True):
        if type(value) is str:
            _STR_TEXTS[value] = rendered
        else:
            _OTHER_TEXTS[key] = rendered


def _event_of(value: Any) -> Any:
    """The scalar event `_Writer.value` emits for `value`."""
    kind = type(value)
    if kind is str:
        return _STR_EVENTS.get(value) or _str_event(value)
    if kind is bool:
        return _TRUE if value else _FALSE
    if kind is int:
        return _scalar_event(_INT, str(value), None)
    if value is None:
        return _NULL_EVENT
    node = _new_dumper(io.StringIO()).represent_data(value)  # floats: the library's own representation
    return _scalar_event(node.tag, node.value, node.style)


def _rendered_texts(events: list[Any]) -> list[_Rendered | None]:
    """What libyaml writes for each scalar event as the value of a key at column 0."""
    stream = io.StringIO()
    dumper = _new_dumper(stream)
    emit = dumper.emit
    emit(yaml.StreamStartEvent())
    emit(yaml.DocumentStartEvent(explicit=False))
    emit(_MAPPING_START)
    for number, event in enumerate(events):
        emit(yaml.ScalarEvent(None, _STR, (True, False), f"k{number}"))
        emit(event)
    emit(_MAPPING_END)
    emit(yaml.DocumentEndEvent(explicit=False))
    emit(yaml.StreamEndEvent())
    text = stream.getvalue()
    unknown: list[_Rendered | None] = [None] * len(events)
    if text.endswith("...\n") or any(mark in text for mark in _OTHER_LINE_BREAKS):
        return unknown  # an open end or an unusual line break: all left to the event writer
    # Every entry starts a line with its key; the lines of a value spread over several are indented or empty.
    entries = text[:-1].split("\nk")
    if len(entries) != len(events):
        return unknown
    results: list[_Rendered | None] = []
    for number, entry in enumerate(entries):
        start = f"{number}: " if number else "k0: "
        if not entry.startswith(start):
            return unknown
        line, _, block = entry[len(start) :].partition("\n")
        if not block:
            results.append((line, None) if len(line) <= _MAX_RENDERED_TEXT else None)
        elif line.startswith("|") and not line.endswith("+"):
            results.append((line, block + "\n"))
        else:
            results.append(None)  # a quoted or plain scalar broken over lines
    return results
