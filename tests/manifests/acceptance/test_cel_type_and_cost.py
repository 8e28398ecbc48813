"""CEL type check and cost estimate of the acceptance check, against kube-apiserver's behaviour.

The cost table is apiextensions-apiserver's own TestCostEstimation (pkg/apiserver/schema/cel): each rule on a
generated schema, its estimated maximum cost without bounds and with every maxItems/maxProperties/maxLength set
to the case's number. The type errors and the budget refusals are what kube-apiserver answers, in its words
(cel-go's messages with their source snippet, apiextensions' getCostErrorMessage).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from acceptance_fixtures import base_crd

from pyop.schema import cel
from pyop_scaffold.manifests.acceptance import cel_rules, check_crd
from pyop_scaffold.manifests.acceptance.cel_ast import reduce
from pyop_scaffold.manifests.acceptance.cel_budget import BudgetError
from pyop_scaffold.manifests.acceptance.cel_check import analyze, self_type
from pyop_scaffold.manifests.acceptance.cel_rules import Placement

S = "spec.validation.openAPIV3Schema"
SPEC = f"{S}.properties[spec]"
Gen = Callable[[int | None], dict[str, Any]]


def _scalar(kind: str) -> dict[str, Any]:
    if kind == "int-or-string":
        return {"x-kubernetes-int-or-string": True}
    if kind in ("duration", "date", "date-time"):
        return {"type": "string", "format": kind}
    return {"type": kind}


def _bounded(schema: dict[str, Any], keyword: str, bound: int | None) -> dict[str, Any]:
    return {**schema, keyword: bound} if bound is not None else schema


def array_of(kind: str) -> Gen:
    return lambda n: _bounded({"type": "array", "items": _scalar(kind)}, "maxItems", n)


def map_of(kind: str) -> Gen:
    return lambda n: _bounded({"type": "object", "additionalProperties": _scalar(kind)}, "maxProperties", n)


def string(n: int | None) -> dict[str, Any]:
    return _bounded({"type": "string"}, "maxLength", n)


def objects(n: int | None) -> dict[str, Any]:
    item = {
        "type": "object",
        "required": ["required"],
        "properties": {"required": {"type": "string"}, "optional": {"type": "string"}},
    }
    return _bounded({"type": "array", "items": item}, "maxItems", n)


def maps_of_numbers(n: int | None) -> dict[str, Any]:
    return _bounded({"type": "array", "items": map_of("number")(n)}, "maxItems", n)


def strings(n: int | None) -> dict[str, Any]:
    return _bounded({"type": "array", "items": string(n)}, "maxItems", n)


# (schema generator, rule, cost without bounds (None: only "over the limit"), bound, cost with that bound)
KUBE_COSTS: list[tuple[Gen, str, int | None, int, int]] = [
    (array_of("number"), "self.all(x, true)", 4718591, 10, 32),
    (array_of("string"), "self.all(x, true)", 3145727, 20, 62),
    (array_of("boolean"), "self.all(x, true)", 1887437, 5, 17),
    (objects, "self.all(x, true)", 555128, 50, 152),
    (map_of("number"), "self.all(x, true)", 1348169, 10, 32),
    (map_of("string"), "self.all(x, true)", 1179647, 3, 11),
    (map_of("boolean"), "self.all(x, true)", 943718, 100, 302),
    (string, "self.contains('test')", 314574, 10, 5),
    (string, "self.startsWith('test')", 2, 15, 2),
    (string, "self.endsWith('test')", 2, 30, 2),
    (string, 'size(self + "hello") > size("hello")', 314578, 4, 7),
    (array_of("number"), "self[1] == 0.0", 2, 5000, 2),
    (array_of("number"), "self.all(x, self.all(y, true))", None, 10, 352),
    (array_of("number"), "self.all(x, self.all(y, self.all(z, true)))", None, 10, 3552),
    (string, 'self.matches("x")', 314574, 50, 22),
    (string, '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7),
    (string, 'self.matches("")', 1, 100, 1),
    (map_of("string"), "self.all(x, x.contains(self[x]))", 2752507, 10, 72),
    (array_of("number"), "self[3] == 0.0", 2, 0, 2),
    (map_of("number"), 'self["x"] == 0.0', 2, 0, 2),
    (string, 'self == "x"', 2, 0, 1),
    (array_of("number"), "self.all(x, x == 0.0)", 6291454, 3 * 1024 * 2048, 25165826),
    (array_of("int-or-string"), "self.all(x, true)", 4718591, 10, 32),
    (array_of("int-or-string"), "self[0] == 5", 3, 10, 3),
    (array_of("boolean"), "self[0] == false", 2, 25, 2),
    (objects, "self[0] == null", 2, 422, 2),
    (maps_of_numbers, "self.all(x, x.y == 25.2)", 6291452, 12, 74),
    (maps_of_numbers, "self[0].x > 2.0", 4, 3000, 4),
    (array_of("duration"), "self.all(x, true)", 2359295, 5, 17),
    (array_of("duration"), "self[0].getHours() == 2", 4, 525, 4),
    (array_of("date"), "self.all(x, true)", 725936, 15, 47),
    (array_of("date"), "self[2].getDayOfMonth() == 13", 4, 42, 4),
    (array_of("date-time"), "self.all(x, true)", 428963, 25, 77),
    (array_of("date-time"), "self[2].getMinutes() == 45", 4, 99, 4),
    (map_of("int-or-string"), "self.all(x, true)", 1348169, 15, 47),
    (map_of("duration"), "self.all(x, true)", 1048577, 5, 17),
    (map_of("date"), "self.all(x, true)", 524288, 10, 32),
    (map_of("date-time"), "self.all(x, true)", 349526, 25, 77),
    (string, "self.find('[0-9]+') == ''", 629147, 10, 11),
    (strings, "self.join(' ') == 'aa bb'", 329853068905, 10, 43),
    (strings, "self.isSorted() == true", 329854432052, 10, 52),
]


def _cost(schema: dict[str, Any], rule: str) -> int:
    tree = reduce(cel.parse_tree(rule), rule)
    assert tree is not None, rule
    analysis = analyze(tree, rule, self_type(schema, False))
    assert analysis.errors == [], analysis.errors
    return analysis.cost


@pytest.mark.parametrize(("generate", "rule", "unbounded", "bound", "bounded"), KUBE_COSTS)
def test_the_estimate_is_the_api_servers(
    generate: Gen, rule: str, unbounded: int | None, bound: int, bounded: int
) -> None:
    if unbounded is None:
        assert _cost(generate(None), rule) > 10_000_000
    else:
        assert _cost(generate(None), rule) == unbounded
    assert _cost(generate(bound), rule) == bounded


NODE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer"},
        "name": {"type": "string", "maxLength": 10},
        "tags": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 5}},
        "labels": {"type": "object", "maxProperties": 4, "additionalProperties": {"type": "string", "maxLength": 5}},
        "port": {"x-kubernetes-int-or-string": True},
        "when": {"type": "string", "format": "date-time"},
    },
}


def _problems(rule: str, **extra: Any) -> list[str]:
    node = {**copy.deepcopy(NODE), "x-kubernetes-validations": [{"rule": rule, **extra}]}
    return [str(error) for error in cel_rules.compile_errors(node, "spec", Placement(None, False))]


def _compile_failure(rule: str, position: str, message: str, caret: int) -> str:
    return (
        f"spec.x-kubernetes-validations[0].rule: Invalid value: {{{_go_rule(rule)}}}: compilation failed: "
        f"ERROR: <input>:{position}: {message}\n | {rule}\n | {'.' * caret}^"
    )


def _go_rule(rule: str) -> str:
    return '"rule":"' + rule.replace('"', '\\"') + '"'


@pytest.mark.parametrize(
    ("rule", "position", "message"),
    [
        ("self.replicas + 'x' > 0", "1:15", "found no matching overload for '_+_' applied to '(int, string)'"),
        ("self.name.startsWith(1)", "1:21", "found no matching overload for 'startsWith' applied to 'string.(int)'"),
        ("self.nope == 1", "1:5", "undefined field 'nope'"),
        ("has(self.name) && has(self.nope)", "1:22", "undefined field 'nope'"),
        ("self.name.foo == 1", "1:10", "type 'string' does not support field selection"),
        (
            "self.replicas.all(x, true)",
            "1:5",
            "expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)",
        ),
        ("!self.name", "1:1", "found no matching overload for '!_' applied to '(string)'"),
        ("self.replicas > 'a'", "1:15", "found no matching overload for '_>_' applied to '(int, string)'"),
        ("self.name == 1", "1:11", "found no matching overload for '_==_' applied to '(string, int)'"),
        ("1 in self.tags", "1:3", "found no matching overload for '@in' applied to '(int, list(string))'"),
        (
            "self.labels[1] == 'b'",
            "1:12",
            "found no matching overload for '_[_]' applied to '(map(string, string), int)'",
        ),
        ("size(self.replicas) > 0", "1:5", "found no matching overload for 'size' applied to '(int)'"),
        (
            "self.replicas > 0 ? 'a' : 1",
            "1:19",
            "found no matching overload for '_?_:_' applied to '(bool, string, int)'",
        ),
        ("self.replicas * 2.0 > 1.0", "1:15", "found no matching overload for '_*_' applied to '(int, double)'"),
        ("self.replicas > limit", "1:17", "undeclared reference to 'limit' (in container '')"),
    ],
)
def test_a_rule_that_does_not_type_check_is_refused_in_cel_gos_words(rule: str, position: str, message: str) -> None:
    column = int(position.split(":")[1])
    assert _problems(rule) == [_compile_failure(rule, position, message, column - 1)]


def test_a_rule_that_is_no_bool_is_refused() -> None:
    assert _problems("self.replicas") == [
        'spec.x-kubernetes-validations[0].rule: Invalid value: {"rule":"self.replicas"}: '
        "cel expression must evaluate to a bool"
    ]


@pytest.mark.parametrize(
    "rule",
    [
        "self.replicas == 1.0",  # mixed numbers: not certain across cel-go versions, so not refused
        "self.replicas < 1.5 && self.replicas >= 0u",  # cross-type numeric comparisons are on in Kubernetes
        "self.port == 'a' || self.port == 1",  # int-or-string is dyn
        "self.tags.all(t, t.size() < 3) && 'a' in self.tags",
        "self.labels['a'] == 'b' && self.labels.all(k, k.startsWith('x'))",
        "self.when < timestamp('2020-01-01T00:00:00Z')",
        "quantity('1').isGreaterThan(quantity('0'))",  # library functions not modelled: accepted
        "self.tags.map(t, t + 'x').all(u, u.size() > 0)",
        "self.?name.orValue('') == ''",  # optional syntax: not checked
        "self.tags.exists_one(t, t == 'a') && self.name != ''",
        "self.name.lowerAscii() == 'a' && self.name.matches('^a')",
        "type(self.port) == string ? self.port.endsWith('%') : self.port > 0",
    ],
)
def test_rules_the_api_server_accepts_are_accepted(rule: str) -> None:
    assert _problems(rule) == []


def test_a_message_expression_must_be_a_string() -> None:
    [problem] = _problems("self.replicas > 0", messageExpression="self.replicas")
    assert problem.endswith("messageExpression must evaluate to a string")
    assert problem.startswith("spec.x-kubernetes-validations[0].messageExpression: Invalid value: ")


FACTOR = (
    "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings "
    "are declared)"
)


def _crd_with(spec_properties: dict[str, Any]) -> dict[str, Any]:
    crd = base_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"].update(copy.deepcopy(spec_properties))
    return crd


def _names(max_items: int | None, max_length: int | None, rule: str) -> dict[str, Any]:
    names: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": [{"rule": rule}]}
    if max_items is not None:
        names["maxItems"] = max_items
    if max_length is not None:
        names["items"]["maxLength"] = max_length
    return {"names": names}


# `self.all(x, x.matches('[a-z]+'))` on maxItems n, maxLength 5000: ceil(20001 / 10) * ceil(6 / 4) + 1 per item,
# plus 3 for the loop: 4006 n + 2.
@pytest.mark.parametrize(
    ("max_items", "factor"),
    [(5000, "2.0x"), (3000, "1.201800x"), (25_000, "10.0x"), (None, "more than 100x")],
)
def test_a_rule_over_budget_is_refused_with_the_api_servers_factor(max_items: int | None, factor: str) -> None:
    crd = _crd_with(_names(max_items, 5000 if max_items is not None else None, "self.all(x, x.matches('[a-z]+'))"))
    errors = check_crd(crd)
    rule_path = f"{SPEC}.properties[names].x-kubernetes-validations[0].rule"
    expected = f"{rule_path}: Forbidden: estimated rule cost exceeds budget by factor of {factor} {FACTOR}"
    assert str(errors[0]) == expected
    assert all(isinstance(error, BudgetError) for error in errors)


def test_a_rule_within_budget_is_accepted() -> None:
    assert check_crd(_crd_with(_names(2000, 5000, "self.all(x, x.matches('[a-z]+'))"))) == []


def test_the_refusal_names_the_bounds_to_add() -> None:
    [rule_error, *_total] = check_crd(_crd_with(_names(None, None, "self.all(x, x.matches('[a-z]+'))")))
    assert isinstance(rule_error, BudgetError)
    assert rule_error.hint == (
        "add maxItems to spec.names (+kubebuilder:validation:MaxItems), "
        "add maxLength to spec.names[*] (+kubebuilder:validation:MaxLength)"
    )
    [rule_error, *_total] = check_crd(_crd_with(_names(100_000, None, "self.all(x, x.matches('[a-z]+'))")))
    assert isinstance(rule_error, BudgetError)
    assert rule_error.hint == "add maxLength to spec.names[*] (+kubebuilder:validation:MaxLength)"


def test_a_rule_below_unbounded_lists_runs_as_often_as_its_node_fits_into_a_request() -> None:
    """`self.size() < 10` costs 3; on the items of an unbounded list of strings it may run 3 MiB / 3 times."""
    items = {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 10"}]}
    assert check_crd(_crd_with({"names": {"type": "array", "items": items}})) == []  # 3 * 1048576 < 10M
    four = "self.size() < 10 && self.size() > 2 && self.size() != 5 && self.size() != 7"  # 12 * 1048576
    heavier = {"type": "string", "x-kubernetes-validations": [{"rule": four}]}
    [error] = check_crd(_crd_with({"names": {"type": "array", "items": heavier}}))
    assert str(error) == (
        f"{SPEC}.properties[names].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds "
        f"budget by factor of 1.258291x {FACTOR}"
    )
    assert isinstance(error, BudgetError)
    assert error.hint == "add maxItems to spec.names (+kubebuilder:validation:MaxItems)"


def test_bounds_above_a_rule_multiply_its_cost() -> None:
    """A rule of cost 4 below two lists of 1,000 items each runs a million times; below three, a billion."""
    rule = {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0 && self < 10"}]}
    two = {"grid": {"type": "array", "maxItems": 1000, "items": {"type": "array", "maxItems": 1000, "items": rule}}}
    assert check_crd(_crd_with(two)) == []
    three = {
        "cube": {
            "type": "array",
            "maxItems": 1000,
            "items": {"type": "array", "maxItems": 10, "items": {"type": "array", "maxItems": 1000, "items": rule}},
        }
    }
    [error] = check_crd(_crd_with(three))
    assert str(error).endswith(f"Forbidden: estimated rule cost exceeds budget by factor of 4.0x {FACTOR}")
    assert isinstance(error, BudgetError) and error.hint == ""  # every bound is set: only simpler rules help


def test_the_schema_total_names_the_most_expensive_rules() -> None:
    """Twelve rules of about 9,000,000 each are each within the per-rule limit, together over the schema's."""
    properties = {
        f"list{number}": {
            "type": "array",
            "maxItems": 1_800_000 - 1000 * number,  # `self.all(x, x > 0)`: 5 per item, plus 2
            "items": {"type": "integer"},
            "x-kubernetes-validations": [{"rule": "self.all(x, x > 0)"}],
        }
        for number in range(12)
    }
    texts = [str(error) for error in check_crd(_crd_with(properties))]
    contributed = "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
    assert texts == [
        *[f"{SPEC}.properties[list{number}].x-kubernetes-validations[0].rule: {contributed}" for number in range(4)],
        f"{S}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds "
        f"budget by factor of 1.076700x {FACTOR}",
    ]


def test_string_conversion_in_a_message_expression_is_refused_as_kube_does() -> None:
    """The API server refuses `'...' + string(self.min)`: a converted value has no size bound."""
    worker = {
        "type": "object",
        "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
        "x-kubernetes-validations": [
            {
                "rule": "self.min <= self.max",
                "messageExpression": "'min (' + string(self.min) + ') exceeds max (' + string(self.max) + ')'",
            }
        ],
    }
    texts = [str(error) for error in check_crd(_crd_with({"worker": worker}))]
    base = f"{SPEC}.properties[worker].x-kubernetes-validations[0].messageExpression"
    assert texts == [
        f"{base}: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x {FACTOR}",
        f"{base}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
        f"{S}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds "
        f"budget by factor of more than 100x {FACTOR}",
    ]
