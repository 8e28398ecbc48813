"""cel-go's type check and static cost estimate of one rule, over the reduced tree of `cel_ast`.

kube-apiserver compiles every ``x-kubernetes-validations`` rule against the CEL type of its schema node
(`cel_decl`) and refuses a rule that does not type-check (a missing field, an operator or function applied to
types it has no overload for, a result that is not a bool) and a rule whose estimated cost, times the number of
times it may run, exceeds the budget. This module does both offline, the same way:

- Types follow cel-go's checker with the Kubernetes environment (cross-type numeric comparisons on). The check
  is one-sided: an error is reported only where cel-go certainly reports it, with cel-go's message and
  position; anything not modelled (library functions outside the core set, optional syntax, message literals)
  has type *unknown*, which accepts every use and is never reported. Object types carry names the API server
  generates, so an error that would have to print one is not reported either.
- The cost is cel-go's estimator (``checker/cost.go``) with Kubernetes' size estimates and library costs
  (``apiserver/pkg/cel/library/cost.go``), maximum side only, saturating at 2^64-1 as Go's does: identifiers
  and selections 1, literals 0, list/map creation 10/30, a comprehension its range's size times its step, string
  functions a tenth per character (``StringTraversalCostFactor``), regular expressions a quarter per pattern
  character. Sizes come from the schema (maxItems, maxProperties, four bytes per maxLength character) or, without
  a bound, from how many of the smallest values fit into a request; each such estimate remembers which bound
  would replace it, so an over-budget rule can say what to add.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Final

from pyop_scaffold.manifests.acceptance import cel_decl
from pyop_scaffold.manifests.acceptance.cel_decl import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    TYPE,
    UINT,
    UNKNOWN,
    CelType,
)

MAX_U64: Final = (1 << 64) - 1
STRING_TRAVERSAL_COST_FACTOR: Final = 0.1
REGEX_STRING_LENGTH_COST_FACTOR: Final = 0.25
LIST_CREATE_BASE_COST: Final = 10
MAP_CREATE_BASE_COST: Final = 30

_NUMERIC: Final = frozenset({"int", "uint", "double"})
_OPEN: Final = frozenset({"unknown", "dyn"})  # types any use is allowed on
_TYPE_IDENTS: Final = frozenset(
    {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "dyn"}
)
_NAMESPACES: Final = frozenset({"cel", "strings", "sets", "format", "google", "math", "optional"})
_TIME_ACCESSORS: Final = frozenset(
    {
        "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours", "getMilliseconds",
        "getMinutes", "getMonth", "getSeconds",
    }
)  # fmt: skip
_CONVERSIONS: Final = {
    "int": INT,
    "uint": UINT,
    "double": DOUBLE,
    "string": STRING,
    "bytes": BYTES,
    "bool": BOOL,
    "duration": DURATION,
    "timestamp": TIMESTAMP,
    "dyn": DYN,
    "type": TYPE,
}
_STRING_TO_STRING: Final = frozenset({"lowerAscii", "upperAscii", "trim", "substring", "replace", "charAt", "reverse"})


def _add(left: int, right: int) -> int:
    return min(left + right, MAX_U64)


def _multiply(left: int, right: int) -> int:
    return min(left * right, MAX_U64)


def _factor(value: int, factor: float) -> int:
    """cel-go's multiplyByCostFactor: the product rounded up, in float64, saturating."""
    product = math.ceil(float(value) * factor)
    return MAX_U64 if product >= 2.0**64 else int(product)


@dataclass(frozen=True)
class Size:
    """A size estimate's maximum and the bounds that would tighten it (keyword, schema place)."""

    max: int
    min: int = 0
    hints: tuple[tuple[str, str], ...] = ()

    def add(self, other: Size) -> Size:
        return Size(_add(self.max, other.max), _add(self.min, other.min), _merge(self.hints, other.hints))


_UNKNOWN_SIZE: Final = Size(MAX_U64)


def _merge(*groups: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    seen: dict[tuple[str, str], None] = {}
    for group in groups:
        for hint in group:
            seen.setdefault(hint, None)
    return tuple(seen)


@dataclass
class _Value:
    type: CelType
    cost: int
    path: tuple[str, ...] | None = None
    size: Size | None = None  # cel-go's ComputedSize: literals, and results whose size a function reports
    hints: tuple[tuple[str, str], ...] = ()  # unbounded sizes this value's cost grew with


@dataclass
class Analysis:
    """What compiling one expression found: cel-go's errors (display strings, in position order), the output
    type, and the estimated maximum cost with the bounds that would lower it."""

    errors: list[str]
    output: CelType
    cost: int
    hints: tuple[tuple[str, str], ...] = field(default=())


def analyze(tree: list[Any], source: str, self_type: CelType) -> Analysis:
    """Type-check and cost `tree` (of `source`) with `self` and `oldSelf` of `self_type`."""
    checker = _Checker(source, self_type)
    value = checker.visit(tree, {})
    errors = [message for _, _, message in sorted(checker.errors, key=lambda item: (item[0], item[1]))]
    return Analysis(errors, value.type, value.cost, _merge(value.hints))


def display_error(source: str, line: int, column: int, message: str) -> str:
    """cel-go's ``Error.ToDisplayString``: the message at 1-based (line, column), then the source line and a
    caret under the column."""
    text = f"ERROR: <input>:{line}:{column}: {message}"
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if 1 <= line <= len(lines):
        snippet = lines[line - 1].replace("\t", " ")
        marks = "".join("\uff0e" if len(char.encode("utf-8")) > 1 else "." for char in snippet[: column - 1])
        text += f"\n | {snippet}\n | {marks}^"
    return text


class _Checker:
    def __init__(self, source: str, self_type: CelType) -> None:
        self._source = source
        self._root = self_type
        self.errors: list[tuple[int, int, str]] = []

    # -- reporting and sizes -------------------------------------------------------------------------------------

    def _error(self, line: int, column: int, message: str) -> None:
        self.errors.append((line, column, display_error(self._source, line, column, message)))

    def _overload(self, node: list[Any], function: str, types: list[CelType], member: bool = False) -> bool:
        """Report cel-go's no-matching-overload error when every type has a certain name; True if reported."""
        found = [kind.name() for kind in types]
        names = [name for name in found if name is not None]
        if len(names) != len(found):
            return False
        signature = f"{names[0]}.({', '.join(names[1:])})" if member else f"({', '.join(names)})"
        self._error(node[-2], node[-1], f"found no matching overload for '{function}' applied to '{signature}'")
        return True

    def _lookup(self, path: tuple[str, ...] | None) -> CelType | None:
        """Kubernetes' size estimator: the declared type at `path` (self / oldSelf, then fields, @items,
        @values, @keys)."""
        if not path or path[0] not in ("self", "oldSelf"):
            return None
        current: CelType | None = self._root
        for name in path[1:]:
            if current is None:
                return None
            if name in ("@items", "@values"):
                current = current.elem
            elif name == "@keys":
                current = current.key
            else:
                current = current.field(name) if current.kind == "object" else None
        return current

    def _size(self, value: _Value) -> Size:
        """cel-go's sizeEstimate: the computed size, else the schema's, else 1 for scalars, else unbounded."""
        if value.size is not None:
            return value.size
        declared = self._lookup(value.path)
        if declared is not None:
            hints = (declared.unbounded,) if declared.unbounded is not None else ()
            return Size(declared.max_elements, 0, hints)
        if value.type.kind in ("bool", "double", "duration", "int", "timestamp", "uint"):
            return Size(1, 1)
        if value.type.kind == "type":
            # cel-go has no size for type values either and would estimate `type(x) == string` as unbounded; not
            # certain enough to refuse a rule the documentation recommends, so counted as a scalar (one-sided).
            return Size(1, 1)
        return _UNKNOWN_SIZE

    # -- the walk ------------------------------------------------------------------------------------------------

    def visit(self, node: list[Any], scope: dict[str, _Value]) -> _Value:
        kind = node[0]
        if kind == "lit":
            literal_type = {"int": INT, "uint": UINT, "double": DOUBLE, "string": STRING, "bytes": BYTES}.get(
                node[1], BOOL if node[1] == "bool" else NULL
            )
            return _Value(literal_type, 0, None, Size(node[2], node[2]))
        if kind == "id":
            return self._ident(node, scope)
        if kind in ("sel", "has"):
            return self._select(node, scope)
        if kind == "call":
            return self._call(node, scope)
        if kind == "list":
            elements = [self.visit(element, scope) for element in node[1]]
            cost = LIST_CREATE_BASE_COST
            for element in elements:
                cost = _add(cost, element.cost)
            names = {element.type.name() for element in elements}
            elem = elements[0].type if elements and len(names) == 1 and None not in names else UNKNOWN
            size = len(elements)
            return _Value(
                CelType("list", elem=elem), cost, None, Size(size, size), _merge(*[e.hints for e in elements])
            )
        if kind == "map":
            cost = MAP_CREATE_BASE_COST
            hints: list[tuple[tuple[str, str], ...]] = []
            for key, item in node[1]:
                for part in (self.visit(key, scope), self.visit(item, scope)):
                    cost = _add(cost, part.cost)
                    hints.append(part.hints)
            size = len(node[1])
            return _Value(CelType("map", elem=UNKNOWN, key=UNKNOWN), cost, None, Size(size, size), _merge(*hints))
        if kind == "macro":
            return self._macro(node, scope)
        return _Value(UNKNOWN, 0)

    def _ident(self, node: list[Any], scope: dict[str, _Value]) -> _Value:
        name = node[1]
        if name in scope:
            bound = scope[name]
            return _Value(bound.type, 1, bound.path, None)
        if name in ("self", "oldSelf"):
            return _Value(self._root, 1, (name,))
        if name in _TYPE_IDENTS:
            return _Value(TYPE, 1)
        if name not in _NAMESPACES:
            self._error(node[2], node[3], f"undeclared reference to '{name}' (in container '')")
        return _Value(UNKNOWN, 1)

    def _select(self, node: list[Any], scope: dict[str, _Value]) -> _Value:
        operand = self.visit(node[1], scope)
        target = operand.type
        name = node[2]
        presence = node[0] == "has"
        path = None if operand.path is None else (*operand.path, name)
        if target.kind == "object":
            found = target.field(name)
            if found is None:
                self._error(node[3], node[4], f"undefined field '{name}'")
                result = UNKNOWN
            else:
                result = found
        elif target.kind == "map":
            result = target.elem or UNKNOWN
        elif target.kind in _OPEN or target.kind == "type":
            result = UNKNOWN if target.kind != "dyn" else DYN
        else:
            if target.name() is not None:
                self._error(node[3], node[4], f"type '{target.name()}' does not support field selection")
            result = UNKNOWN
        if presence:  # has(): no cost of its own in the Kubernetes environment, the operand's only
            return _Value(BOOL, operand.cost, None, None, operand.hints)
        cost = _add(operand.cost, 1) if target.kind in ("map", "object") else operand.cost
        return _Value(result, cost, path, None, operand.hints)

    # -- comprehensions ------------------------------------------------------------------------------------------

    def _macro(self, node: list[Any], scope: dict[str, _Value]) -> _Value:
        _, name, target_node, variable, arguments, line, column = node
        target = self.visit(target_node, scope)
        range_type = target.type
        if range_type.kind == "list":
            var_type, suffix = range_type.elem or UNKNOWN, "@items"
        elif range_type.kind == "map":
            var_type, suffix = range_type.key or UNKNOWN, "@keys"
        else:
            var_type, suffix = (DYN if range_type.kind == "dyn" else UNKNOWN), ""
            if range_type.kind not in _OPEN and range_type.name() is not None:
                self._error(
                    target_node[-2],
                    target_node[-1],
                    f"expression of type '{range_type.name()}' cannot be range of a comprehension "
                    "(must be list, map, or dynamic)",
                )
        var_path = (*target.path, suffix) if target.path is not None and suffix else None
        inner = dict(scope)
        inner[variable] = _Value(var_type, 1, var_path)
        parts = [self.visit(argument, inner) for argument in arguments]
        hints = _merge(target.hints, *[part.hints for part in parts])
        count = self._size(target)
        if name == "all":  # true; @not_strictly_false(r) = 2; r && p = 1 + p; result r = 1
            fixed, step, result = 1, 3 + parts[0].cost, BOOL
        elif name == "exists":  # false; @not_strictly_false(!r) = 3; r || p = 1 + p; result r = 1
            fixed, step, result = 1, 4 + parts[0].cost, BOOL
        elif name == "exists_one":  # 0; true; p ? r + 1 : r = p + 2; result r == 1 = 2
            fixed, step, result = 2, 2 + parts[0].cost, BOOL
        elif name == "filter":  # []; true; p ? r + [x] : r = p + 13; result r = 1
            fixed, step, result = 11, 13 + parts[0].cost, CelType("list", elem=var_type)
        elif len(parts) == 1:  # map(x, f): []; true; r + [f] = 12 + f; result r = 1
            fixed, step, result = 11, 12 + parts[0].cost, CelType("list", elem=parts[0].type)
        else:  # map(x, p, f): p ? r + [f] : r
            fixed, step, result = 11, 12 + parts[0].cost + parts[1].cost, CelType("list", elem=parts[1].type)
        cost = _add(_add(target.cost, fixed), _multiply(count.max, step))
        hints = _merge(count.hints, hints)
        size = Size(count.max, count.min, count.hints) if result.kind == "list" else None
        return _Value(result, cost, None, size, hints)

    # -- calls ---------------------------------------------------------------------------------------------------

    def _call(self, node: list[Any], scope: dict[str, _Value]) -> _Value:
        _, function, target_node, argument_nodes, _line, _column = node
        target = self.visit(target_node, scope) if target_node is not None else None
        arguments = [self.visit(argument, scope) for argument in argument_nodes]
        argument_cost = 0
        for argument in arguments:
            argument_cost = _add(argument_cost, argument.cost)
        hints = _merge(*([target.hints] if target else []), *[argument.hints for argument in arguments])
        outcome = self._function(node, function, target, arguments, argument_cost)
        result_type, call_cost, size, path, call_hints = outcome
        total = _add(call_cost, target.cost) if target is not None else call_cost
        return _Value(result_type, total, path, size, _merge(hints, call_hints))

    def _function(
        self, node: list[Any], function: str, target: _Value | None, arguments: list[_Value], argument_cost: int
    ) -> tuple[CelType, int, Size | None, tuple[str, ...] | None, tuple[tuple[str, str], ...]]:
        """(result type, cost of the call including its arguments but not its target, result size, path, hints)."""
        types = [argument.type for argument in arguments]
        default = 1 + argument_cost
        if target is None and len(arguments) == 2 and function in _OPERATORS:
            return self._operator(node, function, arguments, argument_cost)
        if function == "_?_:_" and len(arguments) == 3:
            condition, if_true, if_false = arguments
            if condition.type.kind not in _OPEN and condition.type.kind != "bool":
                self._overload(node, function, types)
            result = _unify(if_true.type, if_false.type)
            if result is None:
                self._overload(node, function, types)
                result = UNKNOWN
            sizes = [self._size(if_true), self._size(if_false)]
            size = Size(max(s.max for s in sizes), min(s.min for s in sizes), _merge(*[s.hints for s in sizes]))
            return result, _add(condition.cost, max(if_true.cost, if_false.cost)), size, None, ()
        if target is None and len(arguments) == 1 and function in ("!_", "-_"):
            allowed = {"bool"} if function == "!_" else {"int", "double"}
            if types[0].kind not in _OPEN and types[0].kind not in allowed:
                self._overload(node, function, types)
            return (BOOL if function == "!_" else types[0]), default, None, None, ()
        if function == "size":
            sized = target if target is not None else (arguments[0] if len(arguments) == 1 else None)
            if (
                sized is not None
                and sized.type.kind not in _OPEN
                and sized.type.kind
                not in (
                    "string",
                    "bytes",
                    "list",
                    "map",
                )
            ):
                if target is not None:
                    self._overload(node, function, [sized.type], member=True)
                else:
                    self._overload(node, function, [sized.type])
            return INT, default, None, None, ()
        if target is None:
            if function in _CONVERSIONS and len(arguments) == 1:
                return _CONVERSIONS[function], default, None, None, ()
            return UNKNOWN, default, None, None, ()
        return self._method(node, function, target, arguments, argument_cost)

    def _operator(
        self, node: list[Any], function: str, arguments: list[_Value], argument_cost: int
    ) -> tuple[CelType, int, Size | None, tuple[str, ...] | None, tuple[tuple[str, str], ...]]:
        left, right = arguments
        lt, rt = left.type, right.type
        open_operand = lt.kind in _OPEN or rt.kind in _OPEN
        if function in ("_&&_", "_||_"):
            if not open_operand and (lt.kind != "bool" or rt.kind != "bool"):
                self._overload(node, function, [lt, rt])
            return BOOL, argument_cost, None, None, ()
        if function == "_[_]":
            return self._index(node, left, right, argument_cost)
        if function in ("_==_", "_!=_"):
            if not open_operand and not _comparable(lt, rt):
                self._overload(node, function, [lt, rt])
            return (
                BOOL,
                _add(self._traversal_of_smaller(left, right), argument_cost),
                None,
                None,
                self._smaller_hints(left, right),
            )
        if function == "@in":
            if rt.kind == "list":
                element = rt.elem or UNKNOWN
                if lt.kind not in _OPEN and element.kind not in _OPEN and not _comparable(lt, element):
                    self._overload(node, function, [lt, rt])
                size = self._size(right)
                return BOOL, _add(_factor(size.max, 1.0), argument_cost), None, None, size.hints
            if rt.kind == "map":
                key = rt.key or UNKNOWN
                if lt.kind not in _OPEN and key.kind not in _OPEN and not _comparable(lt, key):
                    self._overload(node, function, [lt, rt])
                return BOOL, 1 + argument_cost, None, None, ()
            if rt.kind not in _OPEN and lt.kind not in _OPEN:
                self._overload(node, function, [lt, rt])
            return BOOL, 1 + argument_cost, None, None, ()
        if function in ("_<_", "_<=_", "_>_", "_>=_"):
            ordered = (lt.kind in _NUMERIC and rt.kind in _NUMERIC) or (
                lt.kind == rt.kind and lt.kind in ("bool", "string", "bytes", "timestamp", "duration")
            )
            if not open_operand and not ordered:
                self._overload(node, function, [lt, rt])
            if lt.kind in ("string", "bytes") and rt.kind == lt.kind:
                return (
                    BOOL,
                    _add(self._traversal_of_smaller(left, right), argument_cost),
                    None,
                    None,
                    self._smaller_hints(left, right),
                )
            return BOOL, 1 + argument_cost, None, None, ()
        # arithmetic
        result = _arithmetic(function, lt, rt)
        if result is None:
            if not open_operand:
                self._overload(node, function, [lt, rt])
            result = UNKNOWN
        if function == "_+_" and result.kind in ("string", "bytes", "list"):
            size = self._size(left).add(self._size(right))
            if result.kind == "list":
                return result, 1 + argument_cost, size, None, ()
            return result, _add(_factor(size.max, STRING_TRAVERSAL_COST_FACTOR), argument_cost), size, None, size.hints
        return result, 1 + argument_cost, None, None, ()

    def _traversal_of_smaller(self, left: _Value, right: _Value) -> int:
        smallest = min(self._size(left).max, self._size(right).max)
        return _factor(smallest, STRING_TRAVERSAL_COST_FACTOR)

    def _smaller_hints(self, left: _Value, right: _Value) -> tuple[tuple[str, str], ...]:
        sizes = sorted([self._size(left), self._size(right)], key=lambda size: size.max)
        return sizes[0].hints

    def _index(
        self, node: list[Any], container: _Value, index: _Value, argument_cost: int
    ) -> tuple[CelType, int, Size | None, tuple[str, ...] | None, tuple[tuple[str, str], ...]]:
        kind = container.type.kind
        if kind == "list":
            if index.type.kind not in _OPEN and index.type.kind not in ("int", "uint"):
                self._overload(node, "_[_]", [container.type, index.type])
            path = None if container.path is None else (*container.path, "@items")
            return container.type.elem or UNKNOWN, 1 + argument_cost, None, path, ()
        if kind == "map":
            key = container.type.key or UNKNOWN
            if index.type.kind not in _OPEN and key.kind not in _OPEN and not _comparable(index.type, key):
                self._overload(node, "_[_]", [container.type, index.type])
            path = None if container.path is None else (*container.path, "@values")
            return container.type.elem or UNKNOWN, 1 + argument_cost, None, path, ()
        if kind not in _OPEN and kind != "object" and index.type.kind not in _OPEN:
            self._overload(node, "_[_]", [container.type, index.type])
        return UNKNOWN, 1 + argument_cost, None, None, ()

    def _method(
        self, node: list[Any], function: str, target: _Value, arguments: list[_Value], argument_cost: int
    ) -> tuple[CelType, int, Size | None, tuple[str, ...] | None, tuple[tuple[str, str], ...]]:
        kind = target.type.kind
        types = [argument.type for argument in arguments]
        default = 1 + argument_cost
        if function in ("startsWith", "endsWith", "contains", "matches") and len(arguments) == 1:
            if kind in ("list", "map") and function == "contains":
                return UNKNOWN, default, None, None, ()
            if kind not in _OPEN and (kind != "string" or types[0].kind not in ("string", *_OPEN)):
                self._overload(node, function, [target.type, *types], member=True)
                return BOOL, default, None, None, ()
            if types[0].kind not in _OPEN and types[0].kind != "string":
                self._overload(node, function, [target.type, *types], member=True)
            subject, pattern = self._size(target), self._size(arguments[0])
            if function in ("startsWith", "endsWith"):
                return (
                    BOOL,
                    _add(_factor(pattern.max, STRING_TRAVERSAL_COST_FACTOR), argument_cost),
                    None,
                    None,
                    pattern.hints,
                )
            if function == "contains":
                cost = _multiply(
                    _factor(subject.max, STRING_TRAVERSAL_COST_FACTOR),
                    _factor(pattern.max, STRING_TRAVERSAL_COST_FACTOR),
                )
                return BOOL, _add(cost, argument_cost), None, None, _merge(subject.hints, pattern.hints)
            cost = _multiply(
                _factor(_add(subject.max, 1), STRING_TRAVERSAL_COST_FACTOR),
                _factor(pattern.max, REGEX_STRING_LENGTH_COST_FACTOR),
            )
            return BOOL, _add(cost, argument_cost), None, None, _merge(subject.hints, pattern.hints)
        if kind in _OPEN:
            return UNKNOWN, default, None, None, ()
        if kind in ("timestamp", "duration") and function in _TIME_ACCESSORS:
            return INT, default, None, None, ()
        if kind == "string":
            return self._string_method(function, target, arguments, argument_cost)
        if kind == "list":
            return self._list_method(function, target, arguments, argument_cost)
        return UNKNOWN, default, None, None, ()

    def _string_method(
        self, function: str, target: _Value, arguments: list[_Value], argument_cost: int
    ) -> tuple[CelType, int, Size | None, tuple[str, ...] | None, tuple[tuple[str, str], ...]]:
        subject = self._size(target)
        traversal = _factor(subject.max, STRING_TRAVERSAL_COST_FACTOR)
        if function in ("lowerAscii", "upperAscii", "substring", "trim"):
            return STRING, _add(traversal, argument_cost), subject, None, subject.hints
        if function == "replace" and len(arguments) >= 2:
            old, new = self._size(arguments[0]), self._size(arguments[1])
            if old.min == 0:
                count, retained = (subject.max + 1 if subject.max < MAX_U64 else subject.max), subject.max
            elif new.max <= old.min:
                count, retained = 0, subject.max
            else:
                count, retained = math.ceil(subject.max / old.min), 0
            size = Size(_add(_multiply(count, new.max), retained), 0, subject.hints)
            return (
                STRING,
                _add(_factor(subject.max, 2 * STRING_TRAVERSAL_COST_FACTOR), argument_cost),
                size,
                None,
                subject.hints,
            )
        if function == "split":
            limit = subject.max  # (a literal limit would lower it: not read here, the estimate stays an upper one)
            return (
                CelType("list", elem=STRING),
                _add(_factor(subject.max, 2 * STRING_TRAVERSAL_COST_FACTOR), argument_cost),
                Size(limit, 0, subject.hints),
                None,
                subject.hints,
            )
        if function in ("find", "findAll") and arguments:
            pattern = self._size(arguments[0])
            cost = _multiply(
                _factor(_add(subject.max, 1), STRING_TRAVERSAL_COST_FACTOR),
                _factor(pattern.max, REGEX_STRING_LENGTH_COST_FACTOR),
            )
            result = STRING if function == "find" else CelType("list", elem=STRING)
            return result, _add(cost, argument_cost), Size(subject.max, 0, subject.hints), None, subject.hints
        if function in ("indexOf", "lastIndexOf"):
            return INT, _add(traversal, argument_cost), None, None, subject.hints
        if function in _STRING_TO_STRING:
            return STRING, 1 + argument_cost, None, None, ()
        return UNKNOWN, 1 + argument_cost, None, None, ()

    def _list_method(
        self, function: str, target: _Value, arguments: list[_Value], argument_cost: int
    ) -> tuple[CelType, int, Size | None, tuple[str, ...] | None, tuple[tuple[str, str], ...]]:
        elem = target.type.elem or UNKNOWN
        count = self._size(target)
        element = _Value(elem, 0, None if target.path is None else (*target.path, "@items"))
        if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
            per_element = 1
            hints = count.hints
            if elem.kind in ("string", "bytes"):
                element_size = self._size(element)
                per_element = _add(1, _factor(element_size.max, STRING_TRAVERSAL_COST_FACTOR))
                hints = _merge(hints, element_size.hints)
            result = {"isSorted": BOOL, "indexOf": INT, "lastIndexOf": INT}.get(function, elem)
            return result, _add(_multiply(count.max, per_element), argument_cost), None, None, hints
        if function == "join":
            element_size = self._size(element)
            size = Size(_multiply(count.max, element_size.max), 0, _merge(count.hints, element_size.hints))
            if arguments:
                separator = self._size(arguments[0])
                separators = count.max - 1 if count.max > 0 else 0
                size = Size(_add(size.max, _multiply(separator.max, separators)), 0, size.hints)
            return STRING, _add(_factor(size.max, STRING_TRAVERSAL_COST_FACTOR), argument_cost), size, None, size.hints
        return UNKNOWN, 1 + argument_cost, None, None, ()


_OPERATORS: Final = frozenset(
    {"_+_", "_-_", "_*_", "_/_", "_%_", "_<_", "_<=_", "_>_", "_>=_", "_==_", "_!=_", "@in", "_&&_", "_||_", "_[_]"}
)


def _arithmetic(function: str, left: CelType, right: CelType) -> CelType | None:
    """The result of an arithmetic operator on two types, None where cel-go has no overload (or one side is
    open)."""
    a, b = left.kind, right.kind
    if a in _OPEN or b in _OPEN:
        return None
    if a == b and a in _NUMERIC and not (function == "_%_" and a == "double"):
        return left if a != "double" else DOUBLE
    if function == "_+_":
        if a == b and a in ("string", "bytes"):
            return left
        if a == b == "list":
            elem = _unify(left.elem or UNKNOWN, right.elem or UNKNOWN)
            return CelType("list", elem=elem) if elem is not None else None
        if a == b == "duration":
            return DURATION
        if {a, b} == {"timestamp", "duration"}:
            return TIMESTAMP
    if function == "_-_":
        if a == b == "duration" or a == b == "timestamp":
            return DURATION
        if a == "timestamp" and b == "duration":
            return TIMESTAMP
    return None


def _comparable(left: CelType, right: CelType) -> bool:
    """Whether cel-go's homogeneous equality accepts the two types; True wherever that is not certain (an open
    or null side, mixed numbers, a type whose name is generated)."""
    if left.kind in _OPEN or right.kind in _OPEN or "null" in (left.kind, right.kind):
        return True
    if left.kind in _NUMERIC and right.kind in _NUMERIC:
        return True  # not reported: whether mixed numeric equality type-checks depends on the cel-go version
    left_name, right_name = left.name(), right.name()
    if left_name is None or right_name is None or "dyn" in left_name or "dyn" in right_name:
        return True
    return left_name == right_name


def _unify(left: CelType, right: CelType) -> CelType | None:
    """The common type of two branches or elements; None where cel-go certainly finds none."""
    if left.kind in _OPEN:
        return right if left.kind == "unknown" else DYN
    if right.kind in _OPEN:
        return left if right.kind == "unknown" else DYN
    if "null" in (left.kind, right.kind):
        return left if right.kind == "null" else right
    left_name, right_name = left.name(), right.name()
    if left_name is None or right_name is None or "dyn" in left_name or "dyn" in right_name:
        return left if left.kind == right.kind else UNKNOWN
    return left if left_name == right_name else None


def self_type(schema: dict[str, Any], resource_root: bool, place: str = "") -> CelType:
    """The CEL type `self` has at a schema node (unknown where the API server exposes none); `place` is the
    node's dotted name in hints (``spec.items[*]``)."""
    found = cel_decl.decl_type(schema, resource_root, place)
    return found if found is not None else UNKNOWN
