"""Scanning marker argument values with controller-tools' grammar.

Values are: numbers, booleans, strings (double-quoted with Go escapes, backtick-quoted raw, or bare up to the next
`,` or `;`), lists (`a;b;c` or `{a,b,c}`), and "any" values in relaxed JSON (`{a: 1}`, `{1,2}`, `forty-two`).
"""

from __future__ import annotations

import enum
import json
from typing import Any


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
        """A quoted string, a raw backtick string, or a bare word ending at a stop character."""
        self.skip_spaces()
        char = self.peek()
        if char == '"':
            return self._read_double_quoted()
        if char == "`":
            end = self.text.find("`", self.pos + 1)
            if end < 0:
                raise ValueSyntaxError("unterminated backtick string")
            value = self.text[self.pos + 1 : end]
            self.pos = end + 1
            return value
        start = self.pos
        depth = 0
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c in "{[(":
                depth += 1
            elif c in "}])":
                if depth == 0 and c in stops:
                    break
                depth -= 1
            elif c in stops and depth == 0:
                break
            self.pos += 1
        return self.text[start : self.pos].strip()

    def _read_double_quoted(self) -> str:
        end = self.pos + 1
        while end < len(self.text):
            if self.text[end] == "\\":
                end += 2
                continue
            if self.text[end] == '"':
                break
            end += 1
        else:
            raise ValueSyntaxError("unterminated double-quoted string")
        literal = self.text[self.pos : end + 1]
        self.pos = end + 1
        try:
            return str(json.loads(literal))
        except json.JSONDecodeError as exc:
            raise ValueSyntaxError(f"bad escape in string {literal}") from exc


def read_value(scanner: Scanner, arg_type: ArgType, stops: str) -> Any:
    """Read one value of `arg_type`, leaving the scanner at the stop character (or the end)."""
    if arg_type is ArgType.STRING:
        return scanner.read_string(stops)
    if arg_type in (ArgType.STRING_LIST, ArgType.ANY_LIST):
        return _read_list(scanner, arg_type, stops)
    if arg_type is ArgType.ANY:
        return parse_any(scanner.read_string(stops))
    if arg_type is ArgType.JSON:
        return _parse_json(scanner)
    raw = scanner.read_string(stops)
    if arg_type is ArgType.BOOL:
        if raw in ("true", "false"):
            return raw == "true"
        raise ValueSyntaxError(f"expected true or false, found {raw!r}")
    if arg_type is ArgType.INT:
        try:
            return int(raw)
        except ValueError:
            raise ValueSyntaxError(f"expected an integer, found {raw!r}") from None
    if arg_type is ArgType.NUMBER:
        return _parse_number(raw)
    raise AssertionError(arg_type)


def _read_list(scanner: Scanner, arg_type: ArgType, stops: str) -> list[Any]:
    item_type = ArgType.STRING if arg_type is ArgType.STRING_LIST else ArgType.ANY
    scanner.skip_spaces()
    if scanner.peek() == "{":
        scanner.pos += 1
        items: list[Any] = []
        while True:
            scanner.skip_spaces()
            if scanner.peek() == "}":
                scanner.pos += 1
                return items
            items.append(_read_item(scanner, item_type, ",}"))
            scanner.skip_spaces()
            if scanner.peek() == ",":
                scanner.pos += 1
    items = [_read_item(scanner, item_type, stops + ";")]
    while scanner.peek() == ";":
        scanner.pos += 1
        items.append(_read_item(scanner, item_type, stops + ";"))
    return items


def _read_item(scanner: Scanner, item_type: ArgType, stops: str) -> Any:
    scanner.skip_spaces()
    if item_type is ArgType.STRING:
        return scanner.read_string(stops)
    quoted = scanner.peek() in ('"', "`")
    raw = scanner.read_string(stops)
    return raw if quoted else parse_any(raw)


def _parse_json(scanner: Scanner) -> Any:
    """The rest of the marker as strict JSON, as `+default` takes it (`+default="x"`, `+default=[1,2]`)."""
    raw = scanner.text[scanner.pos :].strip()
    scanner.pos = len(scanner.text)
    if raw.startswith("ref("):
        return IGNORED
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        hint = ' (strings need double quotes: +default="text")' if raw and raw[0] not in '[{"' else ""
        raise ValueSyntaxError(f"expected JSON, found {raw!r}: {exc.msg}{hint}") from None


def _parse_number(raw: str) -> int | float:
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        return float(raw)
    except ValueError:
        raise ValueSyntaxError(f"expected a number, found {raw!r}") from None


def parse_any(raw: str) -> Any:
    """Relaxed JSON as controller-tools reads `default` and `example`: JSON, `{a,b}` lists, `{k: v}` maps, words."""
    text = raw.strip()
    if text == "":
        return ""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    if text.startswith("{") and text.endswith("}"):
        return _parse_braced(text[1:-1])
    return text


def _parse_braced(inner: str) -> Any:
    """`{}` -> {}, `{a,b}` -> ["a","b"], `{k: v, k2: v2}` -> {"k": v, ...}."""
    parts = _split_top_level(inner, ",")
    if not parts:
        return {}
    if all(_split_top_level(p, ":") and len(_split_top_level(p, ":")) == 2 for p in parts):
        result = {}
        for part in parts:
            key, value = _split_top_level(part, ":")
            result[parse_any(key) if key.strip().startswith('"') else key.strip()] = parse_any(value)
        return result
    return [parse_any(p) for p in parts]


def _split_top_level(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    quote = ""
    current = []
    for char in text:
        if quote:
            current.append(char)
            if char == quote:
                quote = ""
            continue
        if char in "\"'`":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        elif char == sep and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    if "".join(current).strip():
        parts.append("".join(current))
    return [p for p in parts if p.strip()]
