"""Label and field selectors with the grammar of ``k8s.io/apimachinery`` (labels.Parse, fields.ParseSelector).

The one parser of pyop: the client (`pyop.client.selectors`, the informer cache's listers), the test API server and
aggregated API servers all read selectors here, so a selector means the same on both sides of the wire. The label
grammar is labels.Parse's lexer and parser: identifiers run to whitespace or one of ``! = ( ) , < >``; a clause is
``key``, ``!key``, ``key=value``, ``key==value``, ``key!=value`` (an empty value allowed), ``key in (a,b)``,
``key notin (a,b)`` (``()`` is the set of the empty string), ``key>1`` or ``key<1`` (integers only); clauses are
separated by commas. Keys must be qualified names and values label values (IsQualifiedName, IsValidLabelValue). So
``tier>1`` is "label tier greater than 1", as on a cluster, and ``tier>x`` is an error.

A bad selector raises `SelectorError`: an ``ApiError`` 400 (what the servers answer) that is also a ``ValueError``
(what the client raises), with labels.Parse's wording. Parsing happens once per request; matching is a loop over
small requirement tuples, so filtering 10,000 objects costs one pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pyop.api.status import ApiError
from pyop.api.validation import label_value_problems, qualified_name_problems


class SelectorError(ApiError, ValueError):
    """A selector that does not parse: 400 on a server, a ValueError to the client's callers."""


def _error(message: str) -> SelectorError:
    return SelectorError(400, message, reason="BadRequest")


@dataclass(frozen=True, slots=True)
class Requirement:
    """One clause: ``key op values``; ``op`` is one of =, !=, in, notin, exists, !exists, gt, lt."""

    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        if self.op in ("=", "in"):
            return present and labels[self.key] in self.values
        if self.op in ("!=", "notin"):
            return not present or labels[self.key] not in self.values
        if not present:
            return False
        try:
            actual = int(labels[self.key])
        except ValueError:
            return False  # labels.Requirement.Matches: a label value that is no integer never matches gt/lt
        bound = int(self.values[0])
        return actual > bound if self.op == "gt" else actual < bound


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside ``( )`` (set-based values contain commas)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


# --- the label selector lexer and parser (apimachinery/pkg/labels/selector.go) -----------------------------------

_SPECIAL: Final = frozenset("=!(),<>")
_OPERATOR_TOKENS: Final = {"!": "!", "!=": "!=", "=": "=", "==": "==", ">": ">", "<": "<", "(": "(", ")": ")", ",": ","}
_KEYWORDS: Final = frozenset({"in", "notin"})
_ID: Final = "identifier"
_END: Final = "end of string"
_BINARY: Final = {"in": "in", "notin": "notin", "=": "=", "==": "=", "!=": "!=", ">": "gt", "<": "lt"}
_BINARY_NAMES: Final = "in, notin, =, ==, !=, gt, lt"


def _tokens(text: str) -> list[tuple[str, str]]:
    """(token, literal) pairs: operator tokens are their own text, identifiers and keywords (`in`, `notin`) are
    `_ID` or the keyword, the last is `_END`."""
    tokens: list[tuple[str, str]] = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char.isspace():
            index += 1
            continue
        if char in _SPECIAL:  # the longest run of special characters that is still an operator
            scanned, end = "", index
            while end < length and text[end] in _SPECIAL and text[index : end + 1] in _OPERATOR_TOKENS:
                end += 1
                scanned = text[index:end]
            if not scanned:
                run = index
                while run < length and text[run] in _SPECIAL:
                    run += 1
                raise _error(f"unable to parse requirement: error expected: keyword found '{text[index:run]}'")
            tokens.append((_OPERATOR_TOKENS[scanned], scanned))
            index = end
            continue
        end = index
        while end < length and not text[end].isspace() and text[end] not in _SPECIAL:
            end += 1
        word = text[index:end]
        tokens.append((word if word in _KEYWORDS else _ID, word))
        index = end
    tokens.append((_END, ""))
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.position = 0

    def lookahead(self, values: bool = True) -> tuple[str, str]:
        token, literal = self.tokens[self.position]
        if values and token in _KEYWORDS:  # in the values context `in` and `notin` are plain identifiers
            token = _ID
        return token, literal

    def consume(self, values: bool = True) -> tuple[str, str]:
        scanned = self.lookahead(values)
        if self.position < len(self.tokens) - 1:
            self.position += 1
        return scanned

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            token, literal = self.lookahead()
            if token == _END:
                return requirements
            if token not in (_ID, "!"):
                raise _error(f"found '{literal}', expected: !, identifier, or 'end of string'")
            requirements.append(self.requirement())
            token, literal = self.consume()
            if token == _END:
                return requirements
            if token != ",":
                raise _error(f"found '{literal}', expected: ',' or 'end of string'")
            token, literal = self.lookahead()
            if token not in (_ID, "!"):
                raise _error(f"found '{literal}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        negated = False
        token, literal = self.consume()
        if token == "!":
            negated = True
            token, literal = self.consume()
        if token != _ID:
            raise _requirement_error(f"found '{literal}', expected: identifier")
        key = literal
        problems = qualified_name_problems(key)
        if problems:
            raise _requirement_error(f'key: Invalid value: "{key}": {"; ".join(problems)}')
        if negated:
            return Requirement(key, "!exists")
        if self.lookahead()[0] in (_END, ","):
            return Requirement(key, "exists")
        token, literal = self.consume(values=False)
        op = _BINARY.get(token if token in _KEYWORDS else literal) if token != _ID else None
        if op is None:
            raise _requirement_error(f"found '{literal}', expected: {_BINARY_NAMES}")
        values = self.value_set() if op in ("in", "notin") else (self.exact_value(),)
        if op in ("gt", "lt") and not _is_integer(values[0]):
            detail = "for 'Gt', 'Lt' operators, the value must be an integer"
            raise _requirement_error(f'values[0][{key}]: Invalid value: "{values[0]}": {detail}')
        for index, value in enumerate(values):
            problems = label_value_problems(value)
            if problems:
                raise _requirement_error(f'values[{index}][{key}]: Invalid value: "{value}": {"; ".join(problems)}')
        return Requirement(key, op, values)

    def value_set(self) -> tuple[str, ...]:
        token, literal = self.consume()
        if token != "(":
            raise _requirement_error(f"found '{literal}' expected: '('")
        token, literal = self.lookahead()
        if token == ")":
            self.consume()
            return ("",)
        if token not in (_ID, ","):
            raise _requirement_error(f"found '{literal}', expected: ',', ')' or identifier")
        values: list[str] = []
        while True:
            token, literal = self.consume()
            if token == _ID:
                values.append(literal)
                following, shown = self.lookahead()
                if following == ")":
                    self.consume()
                    return tuple(dict.fromkeys(values))
                if following != ",":
                    raise _requirement_error(f"found '{shown}', expected: ',' or ')'")
            elif token == ",":  # "(,", "a,,b" and "a,)" hold empty values
                if not values:
                    values.append("")
                following, _ = self.lookahead()
                if following == ")":
                    self.consume()
                    values.append("")
                    return tuple(dict.fromkeys(values))
                if following == ",":
                    self.consume()
                    values.append("")
            else:
                raise _requirement_error(f"found '{literal}', expected: ',', or identifier")

    def exact_value(self) -> str:
        token, _ = self.lookahead()
        if token in (_END, ","):
            return ""
        token, literal = self.consume()
        if token != _ID:
            raise _requirement_error(f"found '{literal}', expected: identifier")
        return literal


def _requirement_error(detail: str) -> SelectorError:
    return _error(f"unable to parse requirement: {detail}")


def _is_integer(value: str) -> bool:
    try:
        int(value, 10)
    except ValueError:
        return False
    return value.strip() == value and "_" not in value


def parse_label_selector(selector: str | None) -> tuple[Requirement, ...]:
    """Parse a label selector (see the module docstring); raise `SelectorError` (400) on bad syntax."""
    if not selector:
        return ()
    return tuple(_Parser(selector).parse())


def labels_match(requirements: tuple[Requirement, ...], obj: Mapping[str, Any]) -> bool:
    if not requirements:
        return True
    labels = obj.get("metadata", {}).get("labels") or {}
    return all(requirement.matches(labels) for requirement in requirements)


def selector_from_label_selector(selector: Mapping[str, Any] | None) -> str:
    """Render a ``metav1.LabelSelector`` (matchLabels/matchExpressions) as its string form (scale status)."""
    if not selector:
        return ""
    clauses = [f"{key}={value}" for key, value in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        if operator == "Exists":
            clauses.append(key)
        elif operator == "DoesNotExist":
            clauses.append(f"!{key}")
        else:
            clauses.append(f"{key} {operator.lower()} ({','.join(values)})")
    return ",".join(clauses)


# --- field selectors -------------------------------------------------------------------------------

FieldGetter = Callable[[Mapping[str, Any]], str | None]


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    field: str
    negate: bool
    value: str
    getter: FieldGetter

    def matches(self, obj: Mapping[str, Any]) -> bool:
        actual = self.getter(obj)
        actual_text = "" if actual is None else actual
        return (actual_text != self.value) if self.negate else (actual_text == self.value)


def path_getter(path: str) -> FieldGetter:
    """A getter for a dotted path; booleans and numbers render as the API server renders them."""
    parts = tuple(path.split("."))

    def get(obj: Mapping[str, Any]) -> str | None:
        value: Any = obj
        for part in parts:
            if not isinstance(value, Mapping):
                return None
            value = value.get(part)
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


_FIELD_OPERATORS: Final = ("!=", "==", "=")  # termOperators: `==` before `=`, so no `=` is left on the value


def _split_field_terms(selector: str) -> list[str]:
    """fields.splitTerms: commas split terms unless escaped (`\\,` stays in the term, backslash and all)."""
    terms, start, escaped = [], 0, False
    for index, char in enumerate(selector):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append(selector[start:index])
            start = index + 1
    terms.append(selector[start:])
    return terms


def _split_field_term(term: str) -> tuple[str, str, str] | None:
    """fields.splitTerm: the first operator found, scanning left to right; the field itself has no escaping."""
    for index in range(len(term)):
        for operator in _FIELD_OPERATORS:
            if term.startswith(operator, index):
                return term[:index], operator, term[index + len(operator) :]
    return None


def unescape_field_value(value: str) -> str:
    """fields.UnescapeValue: `\\\\`, `\\,` and `\\=` stand for themselves; any other escape, a trailing
    backslash, or a bare `,` or `=` is a 400 in apimachinery's words (the rune printed as Go's %v prints it)."""
    if not any(char in value for char in "\\,="):
        return value
    out, escaped = [], False
    for char in value:
        if escaped:
            if char not in "\\,=":
                raise _error(f"invalid field selector: invalid escape sequence: \\{char}")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            raise _error(f"invalid field selector: unescaped character in value: {ord(char)}")
        else:
            out.append(char)
    if escaped:
        raise _error("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def escape_field_value(value: str) -> str:
    """fields.EscapeValue: what a client sends for a value holding `\\`, `,` or `=`."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def parse_field_selector(selector: str | None, supported: Mapping[str, FieldGetter]) -> tuple[FieldRequirement, ...]:
    """fields.ParseSelector: `metadata.name=x,spec.color!=red` (`=`, `==`, `!=`; values escaped with `\\`), terms
    sorted, empty terms skipped, nothing trimmed; a field the resource does not support is 400 as on a real
    server."""
    if not selector:
        return ()
    requirements = []
    for term in sorted(_split_field_terms(selector)):
        if not term:
            continue
        split = _split_field_term(term)
        if split is None:
            raise _error(f"invalid selector: '{selector}'; can't understand '{term}'")
        name, operator, raw = split
        value = unescape_field_value(raw)
        getter = supported.get(name)
        if getter is None:
            raise _error(f"field label not supported: {name}")
        requirements.append(FieldRequirement(name, operator == "!=", value, getter))
    return tuple(requirements)


def fields_match(requirements: tuple[FieldRequirement, ...], obj: Mapping[str, Any]) -> bool:
    return all(requirement.matches(obj) for requirement in requirements)
