"""Scanning marker argument values with controller-tools' grammar, as a total function.

Values are: numbers, booleans, strings (double-quoted with Go escapes, backtick-quoted raw, or bare up to the next
`,` or `;`), lists (`a;b;c` or `{a,b,c}`), and "any" values in relaxed JSON (`{a: 1}`, `{1,2}`, `forty-two`).

Every input ends in a value or a `ValueSyntaxError` (the parser adds the file and line), in time linear in its
length: each character is looked at a bounded number of times, lists and maps nest at most `MAX_DEPTH` deep, an
unterminated `{`, `[`, `"` or backtick is an error (never a loop), numbers are finite float64 values written with
ASCII digits (no `NaN`, no `1e999`, no `１２`), and a key written twice in a map is an error (which one wins would
be a guess). Those rules are what a CRD can hold: the API server reads JSON, which has no NaN or Infinity.
"""

from __future__ import annotations

import enum
import json
import math
import re
from typing import Any

MAX_DEPTH = 64  # lists and maps inside a value; deeper is an error (Python's own parsers would overflow the stack)
MAX_NUMBER_LENGTH = 400  # characters of a number: float64 ends near 1.8e308, so longer digit runs are infinite
INT64 = (-(2**63), 2**63 - 1)  # an `int` argument (MaxLength, priority, port) is a Go int64


class ArgType(enum.Enum):
    """The type of a marker argument; decides how its text is read and what Python value it becomes."""

    STRING = "string"
    INT = "int"
    NUMBER = "number"
    BOOL = "bool"
    STRING_LIST = "string list"
    ANY_LIST = "list"  # Enum=1;2;"foo": each item any scalar
    ANY = "any"  # default / example: relaxed JSON
    JSON = "JSON"  # +default: strict JSON; `ref(...)` (a Go constant) reads as IGNORED


class ValueSyntaxError(ValueError):
    """The text of a marker value does not match its type."""


class _Ignored:
    """A value controller-gen reads and drops (`+default=ref(...)` names a Go constant it cannot evaluate)."""

    def __repr__(self) -> str:
        return "IGNORED"


IGNORED = _Ignored()

_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?", re.ASCII)
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")
_SPACES = re.compile(r"[ \t\r\n]*")
_KEY_WORD = re.compile(r'[^,:{}\[\]"]*')  # a bare key or list item inside braces
_VALUE_WORD = re.compile(r'[^,{}\[\]"]*')  # a bare value after `key:` (a colon may be part of it: `url: http://x`)
_QUOTE = {"{": "}", "[": "]"}


def shown(text: str, limit: int = 60) -> str:
    """`text` quoted for an error message, cut to `limit` characters: a message stays one readable line."""
    if len(text) > limit:
        return repr(text[:limit]) + f" (+{len(text) - limit} more characters)"
    return repr(text)


class Scanner:
    """A cursor over marker text; `stop` characters end a bare word."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def expect(self, char: str) -> None:
        if self.peek() != char:
            found = self.peek() or "end of marker"
            raise ValueSyntaxError(f"expected {char!r} at column {self.pos + 1}, found {found!r}")
        self.pos += 1

    def read_string(self, stops: str) -> str:
        """A quoted string, a raw backtick string, or a bare word ending at a stop character outside brackets."""
        self.skip_spaces()
        char = self.peek()
        if char == '"':
            return self._read_double_quoted()
        if char == "`":
            end = self.text.find("`", self.pos + 1)
            if end < 0:
                raise ValueSyntaxError(f"unterminated backtick string at column {self.pos + 1}")
            value = self.text[self.pos + 1 : end]
            self.pos = end + 1
            return value
        return self._read_bare(stops)

    def rest(self) -> str:
        """The rest of the marker, stripped; the scanner ends."""
        value = self.text[self.pos :].strip()
        self.pos = len(self.text)
        return value

    def _read_bare(self, stops: str) -> str:
        """A bare word: brackets inside it nest (`{a,b}` is one word when `,` stops), quoted parts inside brackets
        are skipped whole; an unterminated bracket or quote is an error. Without stops, the rest of the marker
        (`Pattern=^[^(]*$` is one word whatever its brackets)."""
        if not stops:
            return self.rest()
        text = self.text
        start = self.pos
        closers: list[str] = []
        while self.pos < len(text):
            c = text[self.pos]
            if closers and c == '"':
                match = _JSON_STRING.match(text, self.pos)
                if match is None:
                    raise ValueSyntaxError(f"unterminated double-quoted string at column {self.pos + 1}")
                self.pos = match.end()
                continue
            if c in "{[(":
                if len(closers) >= MAX_DEPTH:
                    raise _too_deep()
                closers.append("}" if c == "{" else "]" if c == "[" else ")")
            elif closers and c == closers[-1]:
                closers.pop()
            elif not closers and c in stops:
                break
            self.pos += 1
        if closers:
            raise ValueSyntaxError(
                f"unterminated {_opener(closers[-1])!r} in {shown(text[start:])} (expected {closers[-1]!r} before "
                "the end; quote the value if the bracket belongs to it)"
            )
        return text[start : self.pos].strip()

    def _read_double_quoted(self) -> str:
        match = _JSON_STRING.match(self.text, self.pos)
        if match is None:
            raise ValueSyntaxError(f"unterminated double-quoted string at column {self.pos + 1}")
        self.pos = match.end()
        return _decode_string(match.group())


def _opener(closer: str) -> str:
    return {"}": "{", "]": "[", ")": "("}[closer]


def _too_deep() -> ValueSyntaxError:
    return ValueSyntaxError(f"value nests more than {MAX_DEPTH} lists or maps deep")


def _decode_string(literal: str) -> str:
    try:
        value = json.loads(literal)
    except json.JSONDecodeError:
        raise ValueSyntaxError(f"bad escape or control character in string {shown(literal)}") from None
    if not isinstance(value, str):  # the pattern matched a quoted literal, so this cannot happen
        raise ValueSyntaxError(f"not a string: {shown(literal)}")
    if _SURROGATE.search(value):
        raise ValueSyntaxError(f"string {shown(literal)} holds a lone surrogate escape (not valid UTF-8)")
    return value


def read_value(scanner: Scanner, arg_type: ArgType, stops: str) -> Any:
    """Read one value of `arg_type`, leaving the scanner at the stop character (or the end)."""
    if arg_type is ArgType.STRING:
        return scanner.read_string(stops)
    if arg_type in (ArgType.STRING_LIST, ArgType.ANY_LIST):
        return _read_list(scanner, arg_type, stops)
    if arg_type is ArgType.ANY:
        return _read_any(scanner, stops)
    if arg_type is ArgType.JSON:
        return _parse_json(scanner)
    raw = scanner.read_string(stops)
    if arg_type is ArgType.BOOL:
        if raw in ("true", "false"):
            return raw == "true"
        raise ValueSyntaxError(f"expected true or false, found {shown(raw)}")
    if arg_type is ArgType.INT:
        return parse_int(raw)
    if arg_type is ArgType.NUMBER:
        return parse_number(raw)
    raise AssertionError(arg_type)


def parse_int(raw: str) -> int:
    """A Go int64 in ASCII digits (`int('１２')` is 12 in Python; Go and the API server refuse it)."""
    if not _INT.fullmatch(raw):
        raise ValueSyntaxError(f"expected an integer, found {shown(raw)}")
    value = int(raw) if len(raw) <= MAX_NUMBER_LENGTH else INT64[1] + 1
    if not INT64[0] <= value <= INT64[1]:
        raise ValueSyntaxError(f"integer {shown(raw)} is out of range (a 64-bit integer)")
    return value


def parse_number(raw: str) -> int | float:
    """A finite number in ASCII digits: an integer stays one, anything else becomes a float64."""
    if not _NUMBER.fullmatch(raw):
        raise ValueSyntaxError(f"expected a number, found {shown(raw)}")
    if len(raw) > MAX_NUMBER_LENGTH:
        raise ValueSyntaxError(f"number {shown(raw)} is too large (not a finite float64)")
    return _finite(raw)


def _finite(raw: str) -> int | float:
    """The number `raw` (already known to be well formed) if float64 can hold it; NaN and infinities are not JSON."""
    if _INT.fullmatch(raw):
        value: int | float = int(raw)
        try:
            float(value)
        except OverflowError:
            raise ValueSyntaxError(f"number {shown(raw)} is too large (not a finite float64)") from None
        return value
    value = float(raw)
    if not math.isfinite(value):
        raise ValueSyntaxError(f"number {shown(raw)} is too large (not a finite float64)")
    return value


def _read_list(scanner: Scanner, arg_type: ArgType, stops: str) -> list[Any]:
    item_type = ArgType.STRING if arg_type is ArgType.STRING_LIST else ArgType.ANY
    scanner.skip_spaces()
    if scanner.peek() == "{":
        start = scanner.pos
        scanner.pos += 1
        items: list[Any] = []
        while True:
            scanner.skip_spaces()
            if scanner.at_end():
                raise ValueSyntaxError(f"unterminated '{{' at column {start + 1} (expected '}}' before the end)")
            if scanner.peek() == "}":
                scanner.pos += 1
                return items
            items.append(_read_item(scanner, item_type, ",}"))
            scanner.skip_spaces()
            if scanner.peek() == ",":
                scanner.pos += 1
            elif scanner.peek() != "}" and not scanner.at_end():
                raise ValueSyntaxError(f"expected ',' or '}}' at column {scanner.pos + 1}, found {scanner.peek()!r}")
    items = [_read_item(scanner, item_type, stops + ";")]
    while scanner.peek() == ";":
        scanner.pos += 1
        items.append(_read_item(scanner, item_type, stops + ";"))
    return items


def _read_item(scanner: Scanner, item_type: ArgType, stops: str) -> Any:
    scanner.skip_spaces()
    if item_type is ArgType.STRING:
        return scanner.read_string(stops)
    return _read_any(scanner, stops)


def _read_any(scanner: Scanner, stops: str) -> Any:
    """A relaxed-JSON value: a backtick string is that string; the rest of the marker (no stops) or a bare word
    is relaxed JSON (`"124"` stays the string it quotes, `124` is a number)."""
    scanner.skip_spaces()
    if scanner.peek() == "`" or (stops and scanner.peek() == '"'):
        return scanner.read_string(stops)
    return parse_any(scanner.read_string(stops) if stops else scanner.rest())


# -- JSON --------------------------------------------------------------------------------------------------------


def _parse_json(scanner: Scanner) -> Any:
    """The rest of the marker as strict JSON, as `+default` takes it (`+default="x"`, `+default=[1,2]`)."""
    raw = scanner.text[scanner.pos :].strip()
    scanner.pos = len(scanner.text)
    if raw.startswith("ref("):
        return IGNORED
    try:
        return strict_json(raw)
    except json.JSONDecodeError as exc:
        hint = ' (strings need double quotes: +default="text")' if raw and raw[0] not in '[{"' else ""
        raise ValueSyntaxError(f"expected JSON, found {shown(raw)}: {exc.msg}{hint}") from None


def strict_json(raw: str) -> Any:
    """JSON as the API server reads it: no NaN or Infinity, finite numbers, each key once, bounded nesting.

    Python's `json` (in C, linear) does the reading; its hooks refuse what JSON text may say but a CRD cannot hold.
    A syntax error is raised as `json.JSONDecodeError`, anything else as `ValueSyntaxError`.
    """
    try:
        value = json.loads(
            raw,
            parse_constant=_no_constant,
            parse_int=_json_number,
            parse_float=_json_number,
            object_pairs_hook=_unique_keys,
        )
    except RecursionError:
        raise _too_deep() from None
    _check_value(value)
    return value


def _no_constant(name: str) -> Any:
    raise ValueSyntaxError(f"{name} is not a number JSON allows (numbers must be finite)")


def _json_number(raw: str) -> int | float:
    if len(raw) > MAX_NUMBER_LENGTH:
        raise ValueSyntaxError(f"number {shown(raw)} is too large (not a finite float64)")
    return _finite(raw)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueSyntaxError(f"key {shown(key)} is written twice in one map")
        result[key] = value
    return result


def _check_value(value: Any) -> None:
    """Nesting within MAX_DEPTH and no lone surrogates (they cannot be written as UTF-8), without recursion."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise ValueSyntaxError(f"string {shown(item)} holds a lone surrogate (not valid UTF-8)")
        elif isinstance(item, (list, dict)):
            if depth >= MAX_DEPTH:
                raise _too_deep()
            children = list(item.values()) + list(item) if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


# -- relaxed JSON ------------------------------------------------------------------------------------------------


def parse_any(raw: str) -> Any:
    """Relaxed JSON as controller-tools reads `default` and `example`: JSON, `{a,b}` lists, `{k: v}` maps, words.

    A text opening with `{`, `[` or `"` is a structure that must be complete; any other text is a scalar (`true`,
    `null`, a JSON number) or else the string it says (`forty-two`, `a, b`).
    """
    text = raw.strip()
    if text == "":
        return ""
    if text[0] not in '{["':
        return _scalar(text)
    try:
        return strict_json(text)  # the common case, read in C
    except (json.JSONDecodeError, ValueSyntaxError):
        pass  # relaxed syntax, or a real error: the relaxed reader says which, with the position
    reader = _Relaxed(text)
    value = reader.value(0, closer="")
    reader.spaces()
    if reader.pos != len(text):
        raise ValueSyntaxError(f"unexpected text {shown(text[reader.pos :])} after the value")
    return value


def _scalar(word: str) -> Any:
    """A bare word: a boolean, null, a JSON number (finite), or else the string itself."""
    if word == "true":
        return True
    if word == "false":
        return False
    if word == "null":
        return None
    if _JSON_NUMBER.fullmatch(word):
        if len(word) > MAX_NUMBER_LENGTH:
            raise ValueSyntaxError(f"number {shown(word)} is too large (not a finite float64)")
        return _finite(word)
    return word


class _Relaxed:
    """A recursive-descent reader of relaxed JSON with explicit depth: `{a: 1, b: [x, "y"]}`, `{a,b}`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def spaces(self) -> None:
        match = _SPACES.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def value(self, depth: int, closer: str) -> Any:
        self.spaces()
        char = self.peek()
        if char in _QUOTE:
            if depth >= MAX_DEPTH:
                raise _too_deep()
            return self.braced(depth + 1) if char == "{" else self.bracketed(depth + 1)
        if char == '"':
            return self.string()
        if char == "":
            return ""
        return _scalar(self.word(_VALUE_WORD))

    def string(self) -> str:
        match = _JSON_STRING.match(self.text, self.pos)
        if match is None:
            raise ValueSyntaxError(f"unterminated double-quoted string at column {self.pos + 1}")
        self.pos = match.end()
        return _decode_string(match.group())

    def word(self, pattern: re.Pattern[str]) -> str:
        match = pattern.match(self.text, self.pos)
        assert match is not None  # the patterns match the empty string
        self.pos = match.end()
        return match.group().strip()

    def separator(self, start: int, closer: str) -> bool:
        """After an item: True at the closing bracket (consumed), False after a comma; else an error."""
        self.spaces()
        char = self.peek()
        if char == ",":
            self.pos += 1
            self.spaces()
            if self.peek() == closer:  # a trailing comma: `{a, b,}`
                self.pos += 1
                return True
            return False
        if char == closer:
            self.pos += 1
            return True
        if char == "":
            opener = _opener(closer)
            raise ValueSyntaxError(
                f"unterminated {opener!r} at column {start + 1} (expected {closer!r} before the end)"
            )
        raise ValueSyntaxError(f"expected ',' or {closer!r} at column {self.pos + 1}, found {char!r}")

    def bracketed(self, depth: int) -> list[Any]:
        start = self.pos
        self.pos += 1
        self.spaces()
        if self.peek() == "]":
            self.pos += 1
            return []
        items: list[Any] = []
        while True:
            self._no_empty_item(start, "]")
            items.append(self.value(depth, "]"))
            if self.separator(start, "]"):
                return items

    def braced(self, depth: int) -> dict[str, Any] | list[Any]:
        """`{}` is an empty map, `{k: v, ...}` a map, `{a, b}` a list; mixing entries and items is an error."""
        start = self.pos
        self.pos += 1
        self.spaces()
        if self.peek() == "}":
            self.pos += 1
            return {}
        entries: dict[str, Any] = {}
        items: list[Any] = []
        while True:
            self._no_empty_item(start, "}")
            key, item = self.element(depth)
            if key is not None:
                if key in entries:
                    raise ValueSyntaxError(f"key {shown(key)} is written twice in one map")
                entries[key] = self.value(depth, "}")
            else:
                items.append(item)
            if entries and items:
                raise ValueSyntaxError(
                    f"'{{' at column {start + 1} mixes 'key: value' entries and list items; write one or the other"
                )
            if self.separator(start, "}"):
                return entries if entries else items

    def element(self, depth: int) -> tuple[str | None, Any]:
        """One element of `{...}`: a key (its `:` consumed) and None, or None and a list item."""
        char = self.peek()
        if char in _QUOTE:
            return None, self.value(depth, "}")
        if char == '"':
            text = self.string()
            item: Any = text
        else:
            text = self.word(_KEY_WORD)
            item = None
        self.spaces()
        if self.peek() == ":":
            self.pos += 1
            return text, None
        return None, item if item is not None else _scalar(text)

    def _no_empty_item(self, start: int, closer: str) -> None:
        self.spaces()
        char = self.peek()
        if char == ",":
            raise ValueSyntaxError(
                f"empty item at column {self.pos + 1} in the {_opener(closer)!r} at column {start + 1}"
            )
        if char == "":
            raise ValueSyntaxError(
                f"unterminated {_opener(closer)!r} at column {start + 1} (expected {closer!r} before the end)"
            )
