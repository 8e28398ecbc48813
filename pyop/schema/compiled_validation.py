"""Structural validation compiled per schema node (the interpreter is ``validation.py``).

``validation.Walk.node`` looks every keyword up again at every node of every write. Here each schema node becomes
once a pair of closures holding only the checks its keywords ask for, split by the value's JSON type:

* ``passes(value)``: True only if the node reports nothing for ``value`` (no error, no CEL rule to run). It
  builds no path and no error, and looks up only the properties that have something to check; most writes are
  valid, and for them this is the whole validation.
* ``check(walk, value, name, path, old, resource_root)``: ``Walk.node`` itself, run when ``passes`` is not sure
  (an error, a rule, a keyword it leaves to the full walk): the same errors, texts, paths and order, as it drives
  the interpreter's ``Walk`` and calls its methods for nulls, enum misses and embedded resources.

Each keyword is one (predicate, report) pair, used by both. A node also names the exact Python types of values it
never reports anything for (``type: string`` alone: ``str``), so its parent skips such a field without a call.
A node whose keywords have unexpected shapes (a ``type`` that is not a string, say) is left to the interpreter.
tests/schema/test_schema_compiled.py compares all this with the interpreter on generated schemas and objects.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from pyop.schema import formats as _formats
from pyop.schema.compiled_memo import Guard
from pyop.schema.errors import child, go_bound, index, invalid, key, required, too_long, too_many
from pyop.schema.patterns import compiled as compiled_pattern
from pyop.schema.validation import (
    _JSON_TYPES,
    Walk,
    _correlate_list,
    _first_duplicate,
    _in_body,
    _is_multiple,
    _map_key,
    map_duplicates,
    set_duplicates,
)
from pyop.schema.values import ABSENT, equal, json_type

Check = Callable[[Walk, Any, str, str, Any, bool], None]
"""A node's full check: (walk, value, name, path, old, resource_root), as ``Walk.node`` takes them."""
Passes = Callable[[Any], bool]
"""True only when the node would report nothing for the value."""
Report = Callable[[Walk, Any, str, str], None]
"""Appends a keyword's errors for a value that failed its predicate: (walk, value, name, path)."""
Keyword = tuple[Passes, Report]

_EVERY_TYPE: Final = frozenset({type(None), str, int, float, bool, dict, list})


def _never(value: Any) -> bool:
    return False


class Node:
    """A compiled schema node (see the module docstring). ``check`` None: it never reports anything."""

    __slots__ = ("check", "passes", "accepts", "rules_below")

    def __init__(self, check: Check | None, passes: Passes, accepts: frozenset[type], rules_below: bool) -> None:
        self.check = check
        self.passes = passes
        self.accepts = accepts  # exact types of values it never reports anything for
        self.rules_below = rules_below  # CEL rules at or below it (only they need the old value)


_NOTHING: Final = Node(None, lambda value: True, _EVERY_TYPE, False)


def compile_node(schema: Any, guard: Guard) -> Node:
    """``Walk.node(value, schema, ...)`` compiled (see the module docstring)."""
    return guard.run(("validate", id(schema)), lambda: _node(schema, guard))  # type: ignore[no-any-return]


def _interpreted(schema: dict[str, Any]) -> Node:
    def check(walk: Walk, value: Any, name: str, path: str, old: Any, resource_root: bool) -> None:
        walk.node(value, schema, name, path, old, resource_root)

    return Node(check, _never, frozenset(), True)


def _regular(schema: dict[str, Any]) -> bool:
    """Whether every keyword this module reads has the shape a structural schema gives it."""
    shapes: tuple[tuple[str, type], ...] = (
        ("type", str),
        ("enum", list),
        ("pattern", str),
        ("format", str),
        ("properties", dict),
        ("required", list),
        ("x-kubernetes-list-map-keys", list),
        ("allOf", list),
        ("anyOf", list),
        ("oneOf", list),
    )
    return all(schema.get(name) is None or isinstance(schema[name], kind) for name, kind in shapes)


class _Part:
    """What a node does for values of one JSON type: the full check's steps, and the quick predicate."""

    __slots__ = ("check", "passes")

    def __init__(self, check: Check | None, passes: Passes | None) -> None:
        self.check = check  # None: nothing to do
        self.passes = passes  # None: always passes


def _keywords_part(keywords: list[Keyword]) -> _Part:
    if not keywords:
        return _Part(None, None)

    def check(walk: Walk, value: Any, name: str, path: str, old: Any, resource_root: bool) -> None:
        for passes, report in keywords:
            if not passes(value):
                report(walk, value, name, path)

    return _Part(check, _every([passes for passes, _ in keywords]))


def _every(predicates: list[Passes]) -> Passes:
    """The predicates joined by ``and`` (nested closures: no generator per call)."""
    first, *rest = predicates
    if not rest:
        return first
    second = _every(rest)
    return lambda value: first(value) and second(value)


def _joined(parts: list[_Part]) -> _Part:
    """Parts run one after the other (their order is the interpreter's order of errors)."""
    checks = [part.check for part in parts if part.check is not None]
    predicates = [part.passes for part in parts if part.passes is not None]
    check: Check | None
    if not checks:
        check = None
    elif len(checks) == 1:
        check = checks[0]
    else:

        def check(walk: Walk, value: Any, name: str, path: str, old: Any, resource_root: bool) -> None:
            for step in checks:
                step(walk, value, name, path, old, resource_root)

    passes: Passes | None
    if not predicates:
        passes = None
    elif len(predicates) == 1:
        passes = predicates[0]
    else:

        def passes(value: Any) -> bool:
            return all(predicate(value) for predicate in predicates)

    return _Part(check, passes)


def _node(schema: Any, guard: Guard) -> Node:
    if not isinstance(schema, dict):
        return _NOTHING
    if not _regular(schema):
        return _interpreted(schema)
    declared: str | None = schema.get("type") or None
    int_or_string = bool(schema.get("x-kubernetes-int-or-string"))
    has_enum = "enum" in schema
    has_rules = "x-kubernetes-validations" in schema

    # go-openapi's early exit for nil: only the type and enum validators run (Walk.null).
    null_declared = declared or ("integer,string" if int_or_string else "")
    null_reports = (not schema.get("nullable") and bool(null_declared)) or has_enum

    type_ok: frozenset[str] | None = None
    type_name = ""
    if declared:
        type_ok = frozenset({declared, "integer"} if declared == "number" else {declared})
        type_name = declared
    elif int_or_string and "anyOf" not in schema:
        # Usually anyOf [{type: integer}, {type: string}] reports this; without it, still refuse.
        type_ok, type_name = frozenset({"integer", "string"}), "integer,string"

    junctors = _junctors(schema, guard)
    enum_part = _keywords_part([_enum_keyword(schema["enum"])] if has_enum else [])
    array_node = _array(schema, guard)
    object_node = _object(schema, guard)
    array_part = _Part(array_node.check, array_node.passes) if array_node is not None else _Part(None, None)
    object_part = _Part(object_node.check, object_node.passes) if object_node is not None else _Part(None, None)
    tail: list[_Part] = []
    if has_rules:

        def rules(walk: Walk, value: Any, name: str, path: str, old: Any, resource_root: bool) -> None:
            if walk.with_rules:
                walk.rule_nodes.append((value, schema, path, old, resource_root))

        tail.append(_Part(rules, _never))
    embedded_parts: list[_Part] = []
    if schema.get("x-kubernetes-embedded-resource"):

        def embedded_resource(walk: Walk, value: Any, name: str, path: str, old: Any, resource_root: bool) -> None:
            walk.embedded_resource(value, path)

        embedded_parts.append(_Part(embedded_resource, _embedded_passes))

    numbers = _joined([_keywords_part(_number_keywords(schema, declared)), enum_part, *tail])
    by_type: dict[str, _Part] = {
        "string": _joined([_keywords_part(_string_keywords(schema)), enum_part, *tail]),
        "integer": numbers,
        "number": numbers,
        "array": _joined([array_part, enum_part, *tail]),
        "object": _joined([enum_part, object_part, *embedded_parts, *tail]),
    }
    other = _joined([enum_part, *tail])  # booleans, and anything json_type names otherwise

    clean = junctors is None and not has_enum and not has_rules

    def passes_type(*names: str) -> bool:
        return type_ok is None or all(name in type_ok for name in names)

    accepting = {
        str: passes_type("string") and by_type["string"].check is None,
        int: passes_type("integer") and numbers.check is None,
        float: passes_type("integer", "number") and numbers.check is None,  # integral floats are "integer"
        bool: passes_type("boolean") and other.check is None,
        dict: passes_type("object") and by_type["object"].check is None,
        list: passes_type("array") and by_type["array"].check is None,
    }
    accepts = {python_type for python_type, ok in accepting.items() if ok and clean}
    if not null_reports:
        accepts.add(type(None))
    rules_below = has_rules or any(part is not None and part.rules_below for part in (array_node, object_node))
    if type_ok is None and accepts >= _EVERY_TYPE and other.check is None:
        return _NOTHING if not rules_below else Node(None, lambda value: True, _EVERY_TYPE, rules_below)

    types_get = _JSON_TYPES.get
    checks_get = {name: part.check for name, part in by_type.items()}.get
    other_check = other.check
    passes_get = {name: part.passes for name, part in by_type.items()}.get
    other_passes = other.passes
    junctors_check = junctors[0] if junctors is not None else None
    junctors_pass = junctors[1] if junctors is not None else None

    def check(walk: Walk, value: Any, name: str, path: str, old: Any, resource_root: bool) -> None:
        if value is None:
            if null_reports:
                walk.null(schema, name)
            return
        actual = types_get(type(value)) or json_type(value)
        if type_ok is not None and actual not in type_ok:
            walk.type_error(name, type_name, actual)
        if junctors_check is not None:
            junctors_check(walk, value, name)
        step = checks_get(actual, other_check)
        if step is not None:
            step(walk, value, name, path, old, resource_root)

    def passes(value: Any) -> bool:
        if value is None:
            return not null_reports
        actual = types_get(type(value)) or json_type(value)
        if type_ok is not None and actual not in type_ok:
            return False
        if junctors_pass is not None and not junctors_pass(value):
            return False
        predicate = passes_get(actual, other_passes)
        return predicate is None or predicate(value)

    if junctors is None:
        # Without junctors, the answer for a value of an exact JSON type is fixed but for its keywords: decided
        # here once per type (floats are "integer" or "number" by value, and others go the general way).
        by_python_type: dict[type, Passes | bool] = {}
        for python_type, actual_name in _JSON_TYPES.items():
            if type_ok is not None and actual_name not in type_ok:
                by_python_type[python_type] = False
            else:
                predicate = passes_get(actual_name, other_passes)
                by_python_type[python_type] = True if predicate is None else predicate
        by_python_type[type(None)] = not null_reports
        general = passes
        decided_get = by_python_type.get

        def passes(value: Any) -> bool:
            decided = decided_get(type(value))
            if decided is None:
                return general(value)
            if decided is True or decided is False:
                return decided
            return decided(value)

    return Node(check, passes, frozenset(accepts), rules_below)


def _embedded_passes(value: dict[str, Any]) -> bool:
    """Walk.embedded_resource reports nothing: apiVersion and kind non-empty strings (at most one "/" in the
    apiVersion), metadata an object if present."""
    api_version = value.get("apiVersion")
    kind = value.get("kind")
    return (
        type(api_version) is str
        and bool(api_version)
        and api_version.count("/") <= 1
        and type(kind) is str
        and bool(kind)
        and ("metadata" not in value or isinstance(value["metadata"], dict))
    )


# --- keywords -------------------------------------------------------------------------------------------------


def _enum_keyword(allowed: list[Any]) -> Keyword:
    strings = frozenset(allowed) if all(type(candidate) is str for candidate in allowed) else None

    def passes(value: Any) -> bool:
        if strings is not None and type(value) is str:
            return value in strings  # a string equals a string candidate as JSON exactly when it does in Python
        return any(equal(value, candidate) for candidate in allowed)

    def report(walk: Walk, value: Any, name: str, path: str) -> None:
        walk.enum(value, allowed, name)

    return passes, report


def _string_keywords(schema: dict[str, Any]) -> list[Keyword]:
    keywords: list[Keyword] = []
    max_length = schema.get("maxLength")
    if max_length is not None:

        def too_long_report(walk: Walk, value: str, name: str, path: str) -> None:
            walk.value_errors.append(too_long(name, int(max_length)))

        keywords.append((lambda value: not len(value) > max_length, too_long_report))
    min_length = schema.get("minLength")
    if min_length is not None:

        def too_short(walk: Walk, value: str, name: str, path: str) -> None:
            detail = f"should be at least {min_length} chars long"
            walk.value_errors.append(invalid(name, value, _in_body(name, detail)))

        keywords.append((lambda value: not len(value) < min_length, too_short))
    pattern = schema.get("pattern")
    regex = compiled_pattern(pattern) if pattern is not None else None
    if regex is not None:  # a pattern Python cannot compile is skipped (patterns.matches)
        search = regex.search

        def mismatch(walk: Walk, value: str, name: str, path: str) -> None:
            walk.value_errors.append(invalid(name, value, _in_body(name, f"should match '{pattern}'")))

        keywords.append((lambda value: search(value) is not None, mismatch))
    format_name = schema.get("format")
    checker = _formats.string_checker(format_name) if format_name else None
    if checker is not None:

        def malformed(walk: Walk, value: str, name: str, path: str) -> None:
            walk.blocking = True
            detail = f"must be of type {format_name}: {json.dumps(value)}"
            walk.value_errors.append(invalid(name, value, _in_body(name, detail)))

        keywords.append((checker, malformed))
    return keywords


def _bound_report(detail: str) -> Report:
    def report(walk: Walk, value: Any, name: str, path: str) -> None:
        walk.value_errors.append(invalid(name, value, _in_body(name, detail)))

    return report


def _number_keywords(schema: dict[str, Any], declared: str | None) -> list[Keyword]:
    keywords: list[Keyword] = []
    factor = schema.get("multipleOf")
    if factor:
        detail = f"should be a multiple of {go_bound(factor)}"
        keywords.append((lambda value: bool(_is_multiple(value, factor)), _bound_report(detail)))
    maximum = schema.get("maximum")
    if maximum is not None:
        if schema.get("exclusiveMaximum"):
            detail = f"should be less than {go_bound(maximum)}"
            keywords.append((lambda value: not value >= maximum, _bound_report(detail)))
        else:
            detail = f"should be less than or equal to {go_bound(maximum)}"
            keywords.append((lambda value: not value > maximum, _bound_report(detail)))
    minimum = schema.get("minimum")
    if minimum is not None:
        if schema.get("exclusiveMinimum"):
            detail = f"should be greater than {go_bound(minimum)}"
            keywords.append((lambda value: not value <= minimum, _bound_report(detail)))
        else:
            detail = f"should be greater than or equal to {go_bound(minimum)}"
            keywords.append((lambda value: not value < minimum, _bound_report(detail)))
    format_name = schema.get("format")
    bounds = _formats.INTEGER_RANGES.get(_formats.normalize(format_name)) if format_name else None
    if bounds is not None and declared == "integer":
        low, high = bounds
        keywords.append((lambda value: low <= value <= high, _bound_report(f"must be of type {format_name}")))
    return keywords


# --- junctors -------------------------------------------------------------------------------------------------


class _Branch:
    """A junctor branch: ``validation._value_errors`` (its own walk, value errors only, no rules) and whether
    the branch surely has none."""

    __slots__ = ("errors", "passes")

    def __init__(self, schema: Any, guard: Guard) -> None:
        node = compile_node(schema, guard)
        check, accepts, quick = node.check, node.accepts, node.passes

        def errors(value: Any, name: str) -> list[Any]:
            if check is None or type(value) in accepts:
                return []
            walk = Walk(with_rules=False)
            check(walk, value, name, name, ABSENT, False)
            return walk.value_errors

        def passes(value: Any) -> bool:
            # A rule inside a branch is never run there (with_rules=False): only the value errors count.
            return check is None or type(value) in accepts or (not node.rules_below and quick(value))

        self.errors = errors
        self.passes = passes


def _junctors(schema: dict[str, Any], guard: Guard) -> tuple[Callable[[Walk, Any, str], None], Passes] | None:
    """allOf, anyOf, oneOf and not (Walk._junctors), each branch compiled; and when they surely pass (allOf:
    every branch does; anyOf: one does; oneOf and not are left to the full check)."""
    if not ("allOf" in schema or "anyOf" in schema or "oneOf" in schema or "not" in schema):
        return None
    all_of = [_Branch(sub, guard) for sub in schema.get("allOf") or ()]
    any_of = [_Branch(sub, guard) for sub in schema.get("anyOf") or ()]
    one_of = [_Branch(sub, guard) for sub in schema.get("oneOf") or ()]
    not_schema = schema.get("not")
    not_branch = _Branch(not_schema, guard) if isinstance(not_schema, dict) else None

    def check(walk: Walk, value: Any, name: str) -> None:
        errors = walk.value_errors
        if all_of:
            passed = 0
            for branch in all_of:
                sub_errors = branch.errors(value, name)
                errors.extend(sub_errors)
                passed += not sub_errors
            if passed != len(all_of):
                suffix = ". None validated" if passed == 0 else ""
                errors.append(invalid(name, "", _in_body(name, f"must validate all the schemas (allOf){suffix}")))
        if any_of:
            first_failure: list[Any] | None = None
            for branch in any_of:
                sub_errors = branch.errors(value, name)
                if not sub_errors:
                    first_failure = None
                    break
                if first_failure is None:
                    first_failure = sub_errors
            if first_failure is not None:
                errors.append(invalid(name, "", _in_body(name, "must validate at least one schema (anyOf)")))
                errors.extend(first_failure)
        if one_of:
            results = [branch.errors(value, name) for branch in one_of]
            passed = sum(1 for result in results if not result)
            if passed != 1:
                errors.append(invalid(name, "", _in_body(name, "must validate one and only one schema (oneOf)")))
                if passed == 0:
                    errors.extend(results[0])
        if not_branch is not None and not not_branch.errors(value, name):
            errors.append(invalid(name, "", _in_body(name, "must not validate the schema (not)")))

    if one_of or not_branch is not None:
        return check, _never

    def passes(value: Any) -> bool:
        if any_of and not any(branch.passes(value) for branch in any_of):
            return False
        return all(branch.passes(value) for branch in all_of)

    return check, passes


# --- arrays and objects ---------------------------------------------------------------------------------------


def _array(schema: dict[str, Any], guard: Guard) -> Node | None:
    """Walk._array: item counts, uniqueness, list-type duplicates, then the items (old items by map key)."""
    keywords: list[Keyword] = []
    min_items = schema.get("minItems")
    if min_items is not None:
        detail = f"should have at least {min_items} items"

        def too_few(walk: Walk, value: list[Any], name: str, path: str) -> None:
            walk.value_errors.append(invalid(name, len(value), _in_body(name, detail)))

        keywords.append((lambda value: not len(value) < min_items, too_few))
    max_items = schema.get("maxItems")
    if max_items is not None:

        def too_many_items(walk: Walk, value: list[Any], name: str, path: str) -> None:
            walk.value_errors.append(too_many(name, len(value), int(max_items)))

        keywords.append((lambda value: not len(value) > max_items, too_many_items))
    if schema.get("uniqueItems"):

        def repeated(walk: Walk, value: list[Any], name: str, path: str) -> None:
            walk.value_errors.append(invalid(name, "", _in_body(name, "shouldn't contain duplicates")))

        keywords.append((lambda value: _first_duplicate(value) is None, repeated))
    list_type = schema.get("x-kubernetes-list-type")
    map_keys: list[str] = schema.get("x-kubernetes-list-map-keys") or []
    if list_type == "set":

        def set_report(walk: Walk, value: list[Any], name: str, path: str) -> None:
            walk.list_errors.extend(set_duplicates(value, path))

        keywords.append((lambda value: not set_duplicates(value, ""), set_report))
    elif list_type == "map":

        def map_report(walk: Walk, value: list[Any], name: str, path: str) -> None:
            walk.list_errors.extend(map_duplicates(value, map_keys, path))

        keywords.append((lambda value: not map_duplicates(value, map_keys, ""), map_report))
    items = schema.get("items")
    item_node = compile_node(items, guard) if isinstance(items, dict) else _NOTHING
    item_check, item_accepts, item_passes = item_node.check, item_node.accepts, item_node.passes
    correlate = item_node.rules_below  # old items matter to transition rules only
    if not keywords and item_check is None:
        return None
    keywords_part = _keywords_part(keywords)
    keywords_check, keywords_pass = keywords_part.check, keywords_part.passes

    def check(walk: Walk, value: list[Any], name: str, path: str, old: Any, resource_root: bool) -> None:
        if keywords_check is not None:
            keywords_check(walk, value, name, path, old, resource_root)
        if item_check is None:
            return
        old_items = _correlate_list(old, list_type, map_keys) if correlate else None
        for position, item in enumerate(value):
            if type(item) in item_accepts:
                continue
            old_item = ABSENT
            if old_items is not None and isinstance(item, dict):
                old_item = old_items.get(_map_key(item, map_keys), ABSENT)
            item_check(walk, item, index(name, position), index(path, position), old_item, False)

    def passes(value: list[Any]) -> bool:
        if keywords_pass is not None and not keywords_pass(value):
            return False
        if item_check is not None:
            for item in value:
                if type(item) not in item_accepts and not item_passes(item):
                    return False
        return True

    return Node(check, passes, frozenset(), item_node.rules_below)


def _object(schema: dict[str, Any], guard: Guard) -> Node | None:
    """Walk._object: property counts, required, then each field by its property or additionalProperties."""
    keywords: list[Keyword] = []
    max_properties = schema.get("maxProperties")
    if max_properties is not None:

        def too_many_fields(walk: Walk, value: dict[str, Any], name: str, path: str) -> None:
            walk.value_errors.append(too_many(name, len(value), int(max_properties)))

        keywords.append((lambda value: not len(value) > max_properties, too_many_fields))
    min_properties = schema.get("minProperties")
    if min_properties is not None:
        detail = f"should have at least {min_properties} properties"

        def too_few_fields(walk: Walk, value: dict[str, Any], name: str, path: str) -> None:
            walk.value_errors.append(invalid(name, len(value), _in_body(name, detail)))

        keywords.append((lambda value: not len(value) < min_properties, too_few_fields))
    required_names = tuple(schema.get("required") or ())
    if required_names:

        def missing(walk: Walk, value: dict[str, Any], name: str, path: str) -> None:
            for field_name in required_names:
                if field_name not in value:
                    walk.value_errors.append(required(child(name, field_name)))

        required_set = frozenset(required_names)
        keywords.append((lambda value: value.keys() >= required_set, missing))

    properties: dict[str, Any] = schema.get("properties") or {}
    # Fields with a property (properties.get(name) is not None): its node, or None when it never reports.
    fields: dict[str, Node | None] = {}
    for field_name, field_schema in properties.items():
        if field_schema is not None:
            node = compile_node(field_schema, guard)
            fields[field_name] = node if node.check is not None else None
    checked = [(field_name, node) for field_name, node in fields.items() if node is not None]
    additional = schema.get("additionalProperties")
    map_node = compile_node(additional, guard) if isinstance(additional, dict) else None
    if map_node is not None and map_node.check is None:
        map_node = None
    forbid_others = additional is False
    others = map_node is not None or forbid_others  # fields without a property matter
    rules_below = any(node.rules_below for node in (*(node for _, node in checked), map_node) if node is not None)
    if not keywords and not checked and not others:
        return None
    keywords_part = _keywords_part(keywords)
    keywords_check, keywords_pass = keywords_part.check, keywords_part.passes
    fields_get = fields.get
    absent: Any = object()

    def check(walk: Walk, value: dict[str, Any], name: str, path: str, old: Any, resource_root: bool) -> None:
        if keywords_check is not None:
            keywords_check(walk, value, name, path, old, resource_root)
        if not checked and not others:
            return
        old_map = old if rules_below and isinstance(old, dict) else None
        for field_name, field_value in value.items():
            node = fields_get(field_name, absent)
            if node is absent:
                if map_node is not None:
                    if type(field_value) in map_node.accepts:
                        continue
                    old_value = old_map.get(field_name, ABSENT) if old_map is not None else ABSENT
                    map_check = map_node.check
                    assert map_check is not None
                    map_check(walk, field_value, child(name, field_name), key(path, field_name), old_value, False)
                elif forbid_others:
                    detail = f"{name}.{field_name} in body is a forbidden property"
                    walk.value_errors.append(invalid(name, "", detail))
                continue
            if node is None or type(field_value) in node.accepts:
                continue
            child_name = f"{name}.{field_name}" if name else field_name  # child(), inlined: hot
            child_path = child_name if path == name else child(path, field_name)
            old_value = old_map.get(field_name, ABSENT) if old_map is not None else ABSENT
            node.check(walk, field_value, child_name, child_path, old_value, False)

    # The quick predicate looks up only the properties with something to check (in any order: it answers
    # yes or no), and walks the other fields only when they matter.
    checked_fields = [(field_name, node.accepts, node.passes) for field_name, node in checked]
    map_accepts = map_node.accepts if map_node is not None else frozenset()
    map_passes = map_node.passes if map_node is not None else _never

    def passes(value: dict[str, Any]) -> bool:
        if keywords_pass is not None and not keywords_pass(value):
            return False
        value_get = value.get
        for field_name, accepts, field_passes in checked_fields:
            field_value = value_get(field_name, absent)
            if field_value is absent or type(field_value) in accepts:
                continue
            if not field_passes(field_value):
                return False
        if others:
            for field_name, field_value in value.items():
                if field_name in fields:
                    continue
                if forbid_others:
                    return False
                if type(field_value) not in map_accepts and not map_passes(field_value):
                    return False
        return True

    return Node(check, passes, frozenset(), rules_below)


__all__ = ["Check", "Node", "Passes", "compile_node"]
