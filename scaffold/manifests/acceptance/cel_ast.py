"""celpy's Lark parse tree of a CEL expression, reduced to the small expression tree cel-go's checker walks.

The type check and the cost estimate (`cel_check`) read an expression the way cel-go does after parsing:
literals, identifiers, field selections, presence tests, calls (operators are calls named as cel-go names them,
``_+_``, ``_[_]``, ``!_``, ``@in``), list and map literals, and the comprehension macros. Each node carries the
line and column cel-go reports for it (1-based, counted in code points): the operator of a binary or unary
operation, the ``.`` of a selection, the ``(`` of a call, the ``[`` of an index, the ``?`` of a conditional.
Lark drops operator tokens, so they are found in the source between the operands (only parentheses, white
space and comments can sit there besides the operator).

The tree is plain JSON data (nested lists) so that it can be kept in the parse summary cache:

- ``["lit", kind, size, value, line, col]``: kind is int/uint/double/string/bytes/bool/null; size is a string's
  length in code points or a bytes literal's length (1 otherwise); value is an integer literal's value, else None
- ``["id", name, line, col]``
- ``["sel", operand, field, line, col]`` and ``["has", operand, field, line, col]``
- ``["call", function, target or None, [args], line, col]``
- ``["list", [elements], line, col]`` and ``["map", [[key, value], ...], line, col]``
- ``["macro", name, target, variable, [args], line, col]``: all, exists, exists_one, map (2 or 3 args), filter
- ``["unknown", line, col]``: anything the checker does not model (message literals, leading-dot names, ...)
"""

from __future__ import annotations

import ast as python_ast
import re
from typing import Any, Final

_BINARY: Final = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_gt": "_>_",
    "relation_ge": "_>=_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "@in",
    "addition_add": "_+_",
    "addition_sub": "_-_",
    "multiplication_mul": "_*_",
    "multiplication_div": "_/_",
    "multiplication_mod": "_%_",
}
_OPERATOR_TEXT: Final = {
    "_<_": "<",
    "_<=_": "<=",
    "_>_": ">",
    "_>=_": ">=",
    "_==_": "==",
    "_!=_": "!=",
    "@in": "in",
    "_+_": "+",
    "_-_": "-",
    "_*_": "*",
    "_/_": "/",
    "_%_": "%",
    "_&&_": "&&",
    "_||_": "||",
}
_MACROS: Final = frozenset({"all", "exists", "exists_one", "map", "filter"})
_COMMENT: Final = re.compile(r"//[^\n]*")


class _Unsupported(Exception):
    """A construct the reduced tree does not model: the expression gets no tree."""


def reduce(tree: Any, source: str) -> list[Any] | None:
    """The reduced tree of celpy's parse `tree` of `source`, or None when it holds something not modelled."""
    try:
        return _Reducer(source).expr(tree)
    except (_Unsupported, IndexError, AttributeError, ValueError, SyntaxError):
        return None


class _Reducer:
    def __init__(self, source: str) -> None:
        self._source = source
        # Offsets of line starts, to turn an offset into (line, column).
        self._line_starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", source)]
        self._spans: dict[int, tuple[int, int]] = {}

    # -- positions -----------------------------------------------------------------------------------------------

    def _position(self, offset: int) -> tuple[int, int]:
        line = 0
        for number, start in enumerate(self._line_starts):
            if start > offset:
                break
            line = number
        return line + 1, offset - self._line_starts[line] + 1

    def _span(self, tree: Any) -> tuple[int, int]:
        """(start, end) offsets of the tokens under `tree`."""
        found = self._spans.get(id(tree))
        if found is not None:
            return found
        start, end = -1, -1
        for child in tree.children:
            if child is None:
                continue
            if hasattr(child, "data"):
                child_start, child_end = self._span(child)
            else:  # celpy's keyword literals (true, false, null) come without positions
                child_start = child.start_pos if child.start_pos is not None else -1
                child_end = child.end_pos if child.end_pos is not None else -1
            if child_start < 0:
                continue
            if start < 0:
                start = child_start
            end = child_end
        self._spans[id(tree)] = (start, end)
        return start, end

    def _between(self, left: Any, right: Any, text: str) -> tuple[int, int]:
        """Where `text` (an operator) sits between two subtrees."""
        begin = self._span(left)[1]
        finish = self._span(right)[0]
        if finish < 0:  # a keyword literal on the right: the operator is the first match after the left side
            finish = len(self._source)
        gap = _COMMENT.sub(lambda match: " " * len(match.group()), self._source[begin:finish])
        where = gap.find(text)
        if where < 0:
            raise _Unsupported(text)
        return self._position(begin + where)

    def _before(self, tree: Any, text: str) -> tuple[int, int]:
        """Where `text` sits before `tree` (a prefix operator; only white space and '(' in between)."""
        start = self._span(tree)[0]
        where = self._source.rfind(text, 0, start)
        if where < 0:
            raise _Unsupported(text)
        return self._position(where)

    def _after_token(self, token: Any, text: str) -> tuple[int, int]:
        where = self._source.find(text, token.end_pos)
        if where < 0:
            raise _Unsupported(text)
        return self._position(where)

    # -- the grammar ---------------------------------------------------------------------------------------------

    def expr(self, tree: Any) -> list[Any]:
        data = tree.data
        children = [child for child in tree.children if child is not None]
        handler = getattr(self, f"_{data}", None)
        if handler is not None:
            result: list[Any] = handler(tree, children)
            return result
        if len(children) == 1 and hasattr(children[0], "data"):
            return self.expr(children[0])
        raise _Unsupported(data)

    def _expr(self, tree: Any, children: list[Any]) -> list[Any]:
        if len(children) == 1:
            return self.expr(children[0])
        condition, if_true, if_false = children
        line, column = self._between(condition, if_true, "?")
        return ["call", "_?_:_", None, [self.expr(condition), self.expr(if_true), self.expr(if_false)], line, column]

    def _logical(self, children: list[Any], function: str) -> list[Any]:
        if len(children) == 1:
            return self.expr(children[0])
        left, right = children
        line, column = self._between(left, right, _OPERATOR_TEXT[function])
        return ["call", function, None, [self.expr(left), self.expr(right)], line, column]

    def _conditionalor(self, tree: Any, children: list[Any]) -> list[Any]:
        return self._logical(children, "_||_")

    def _conditionaland(self, tree: Any, children: list[Any]) -> list[Any]:
        return self._logical(children, "_&&_")

    def _binary(self, tree: Any, children: list[Any]) -> list[Any]:
        if len(children) == 1:
            return self.expr(children[0])
        operation, right = children
        function = _BINARY[operation.data]
        left = operation.children[0]
        line, column = self._between(left, right, _OPERATOR_TEXT[function])
        return ["call", function, None, [self.expr(left), self.expr(right)], line, column]

    _relation = _binary
    _addition = _binary
    _multiplication = _binary

    def _unary(self, tree: Any, children: list[Any]) -> list[Any]:
        if len(children) == 1:
            return self.expr(children[0])
        operation, operand = children
        text, function = ("!", "!_") if operation.data == "unary_not" else ("-", "-_")
        line, column = self._before(operand, text)
        reduced = self.expr(operand)
        if function == "-_" and reduced[0] == "lit" and reduced[1] in ("int", "double"):
            # cel-go folds the sign into a numeric literal
            return ["lit", reduced[1], 1, -reduced[3] if reduced[3] is not None else None, line, column]
        return ["call", function, None, [reduced], line, column]

    def _member_dot(self, tree: Any, children: list[Any]) -> list[Any]:
        operand, name = children
        line, column = self._position(self._source.rfind(".", 0, name.start_pos))
        return ["sel", self.expr(operand), str(name), line, column]

    def _member_dot_arg(self, tree: Any, children: list[Any]) -> list[Any]:
        target = children[0]
        name = children[1]
        arguments = self._arguments(children[2] if len(children) > 2 else None)
        line, column = self._after_token(name, "(")
        method = str(name)
        if method in _MACROS and arguments and arguments[0][0] == "id" and len(arguments) in (2, 3):
            if method != "map" and len(arguments) != 2:
                raise _Unsupported(method)
            return ["macro", method, self.expr(target), arguments[0][1], arguments[1:], line, column]
        return ["call", method, self.expr(target), arguments, line, column]

    def _member_index(self, tree: Any, children: list[Any]) -> list[Any]:
        target, index = children
        line, column = self._between(target, index, "[")
        return ["call", "_[_]", None, [self.expr(target), self.expr(index)], line, column]

    def _member_object(self, tree: Any, children: list[Any]) -> list[Any]:
        raise _Unsupported("message literal")

    def _dot_ident_arg(self, tree: Any, children: list[Any]) -> list[Any]:
        raise _Unsupported("leading dot")

    _dot_ident = _dot_ident_arg

    def _ident_arg(self, tree: Any, children: list[Any]) -> list[Any]:
        name = children[0]
        arguments = self._arguments(children[1] if len(children) > 1 else None)
        line, column = self._after_token(name, "(")
        if str(name) == "has":
            if len(arguments) != 1 or arguments[0][0] != "sel":
                raise _Unsupported("has")
            _, operand, field, _line, _column = arguments[0]
            return ["has", operand, field, line, column]
        return ["call", str(name), None, arguments, line, column]

    def _ident(self, tree: Any, children: list[Any]) -> list[Any]:
        token = children[0]
        return ["id", str(token), token.line, token.column]

    def _paren_expr(self, tree: Any, children: list[Any]) -> list[Any]:
        return self.expr(children[0])

    def _list_lit(self, tree: Any, children: list[Any]) -> list[Any]:
        if not children:  # `[]`: a literal never fails the check, so its position is never reported
            return ["list", [], 0, 0]
        line, column = self._position(self._source.rfind("[", 0, self._span(children[0])[0]))
        return ["list", self._arguments(children[0]), line, column]

    def _map_lit(self, tree: Any, children: list[Any]) -> list[Any]:
        if not children:
            return ["map", [], 0, 0]
        inits = [child for child in children[0].children if child is not None]
        line, column = self._position(self._source.rfind("{", 0, self._span(children[0])[0]))
        entries = [[self.expr(inits[i]), self.expr(inits[i + 1])] for i in range(0, len(inits), 2)]
        return ["map", entries, line, column]

    def _literal(self, tree: Any, children: list[Any]) -> list[Any]:
        token = children[0]
        text = str(token)
        kind = token.type
        line, column = token.line or 0, token.column or 0
        if kind == "INT_LIT":
            return [
                "lit",
                "int",
                1,
                int(text, 0) if not text.lstrip("-").startswith("0x") else int(text, 16),
                line,
                column,
            ]
        if kind == "UINT_LIT":
            return ["lit", "uint", 1, int(text[:-1], 0) if "x" not in text else int(text[:-1], 16), line, column]
        if kind == "FLOAT_LIT":
            return ["lit", "double", 1, None, line, column]
        if kind == "BOOL_LIT":
            return ["lit", "bool", 1, None, line, column]
        if kind == "NULL_LIT":
            return ["lit", "null", 1, None, line, column]
        if kind in ("STRING_LIT", "MLSTRING_LIT"):
            return ["lit", "string", len(_string_value(text)), None, line, column]
        if kind == "BYTES_LIT":
            return ["lit", "bytes", len(_string_value(text[1:]).encode("utf-8")), None, line, column]
        raise _Unsupported(kind)

    def _arguments(self, exprlist: Any) -> list[list[Any]]:
        if exprlist is None:
            return []
        return [self.expr(child) for child in exprlist.children if child is not None]


def _string_value(text: str) -> str:
    """The value of a CEL string literal (quotes, raw prefix and escapes resolved); close enough to count its
    code points, which is all the cost estimate reads."""
    raw = text[:1] in "rR"
    body = text[1:] if raw else text
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    inner = body[len(quote) : len(body) - len(quote)]
    if raw or "\\" not in inner:
        return inner
    try:
        value = python_ast.literal_eval(quote + inner + quote)
    except (ValueError, SyntaxError):
        return inner
    return value if isinstance(value, str) else inner
