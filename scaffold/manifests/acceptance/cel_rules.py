"""Static checks of ``x-kubernetes-validations`` (validation.go, ``schema/cel/compilation.go``).

Shape checks (rule present, message/messageExpression/reason/fieldPath well formed) always
run. Parsing uses cel-python's grammar; the parse is reduced to cel-go's expression tree
(`cel_ast`), type-checked against the rule's schema node and its cost estimated (`cel_check`),
each rule held to the API server's budget (`cel_budget`): what cel-go's checker certainly
rejects is reported in its words (undeclared references, missing fields, operators and functions
applied to the wrong types, a result that is no bool), and so is a rule that would cost too
much. Expressions the reduced tree does not model fall back to the checks that need no typing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from pyop.schema import cel, fieldpath
from pyop.schema.errors import FieldError, child, index, invalid, key, not_supported, required
from pyop_scaffold.manifests.acceptance import cel_ast, cel_budget, cel_check, cel_summary
from pyop_scaffold.manifests.acceptance.cel_budget import Ledger
from pyop_scaffold.manifests.acceptance.cel_decl import escape_property
from pyop_scaffold.manifests.acceptance.cel_grammar import load_cel_parser
from pyop_scaffold.manifests.acceptance.cel_summary import Summary, SummaryCache
from pyop_scaffold.manifests.acceptance.memo import SchemaMemo

SUPPORTED_REASONS: Final = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]
# Global identifiers the Kubernetes CEL environment declares besides self/oldSelf.
_KNOWN_GLOBALS: Final = frozenset(
    [
        "self",
        "oldSelf",
        "int",
        "uint",
        "double",
        "bool",
        "string",
        "bytes",
        "list",
        "map",
        "null_type",
        "type",
        "dyn",
        "optional",
        "cel",
        "strings",
        "sets",
        "format",
        "google",
        "math",
    ]
)
_MACROS: Final = frozenset(
    {"all", "exists", "exists_one", "map", "filter", "transformList", "transformMap", "transformMapEntry", "existsOne"}
)


def shape_errors(node: dict[str, Any], path: str) -> list[FieldError]:
    """Rule-list checks that need no compilation."""
    errors: list[FieldError] = []
    for position, rule in enumerate(node.get("x-kubernetes-validations") or ()):
        rule_path = index(child(path, "x-kubernetes-validations"), position)
        expression = (rule.get("rule") or "").strip()
        message = rule.get("message") or ""
        if not expression:
            errors.append(required(child(rule_path, "rule"), "rule is not specified"))
        if message and not message.strip():
            errors.append(invalid(child(rule_path, "message"), message, "must be non-empty if specified"))
        elif "\n" in message or "\r" in message:
            errors.append(invalid(child(rule_path, "message"), message, "must not contain line breaks"))
        elif ("\n" in expression or "\r" in expression) and not message.strip():
            errors.append(
                required(child(rule_path, "message"), "message must be specified if rule contains line breaks")
            )
        message_expression = rule.get("messageExpression")
        if message_expression is not None and message_expression != "" and not message_expression.strip():
            errors.append(
                required(child(rule_path, "messageExpression"), "messageExpression must be non-empty if specified")
            )
        reason = rule.get("reason")
        if reason is not None and reason not in SUPPORTED_REASONS:
            errors.append(not_supported(child(rule_path, "reason"), reason, SUPPORTED_REASONS))
        field_path = rule.get("fieldPath")
        if field_path is not None and field_path != "":
            errors.extend(_field_path_errors(field_path, node, child(rule_path, "fieldPath")))
        elif field_path == "" and "fieldPath" in rule:
            pass  # empty string == unset after decoding
    return errors


def _field_path_errors(field_path: str, node: dict[str, Any], path: str) -> list[FieldError]:
    if not field_path.strip():
        return [invalid(path, field_path, "must be non-empty if specified")]
    if "\n" in field_path or "\r" in field_path:
        return [invalid(path, field_path, "must not contain line breaks")]
    try:
        fieldpath.resolve(fieldpath.parse(field_path.strip()), node, allow_array=False)
    except fieldpath.FieldPathError as error:
        return [invalid(path, field_path, f"must be a valid path: {error}")]
    return []


@dataclass(frozen=True)
class Placement:
    """Where a rule sits: which ancestor (if any) makes oldSelf uncorrelatable, and how often the rule may run
    (the product of the bounds of the lists and maps above it; None when one of them has none, and then the
    `unbounded_within` bounds, as (keyword, place), would make it finite)."""

    uncorrelatable_within: str | None
    resource_root: bool
    cardinality: int | None = 1
    place: str = ""  # the node's dotted name in hints (spec.items[*])
    unbounded_within: tuple[tuple[str, str], ...] = ()


def compile_errors(
    node: dict[str, Any], path: str, placement: Placement, ledger: Ledger | None = None
) -> list[FieldError]:
    """Errors the API server's CEL compilation would report for this node's rules (none without cel-python),
    in its order per rule: the cost, the compilation, the messageExpression, the oldSelf checks. Each rule's
    and messageExpression's cost goes into `ledger` (the schema's total)."""
    errors: list[FieldError] = []
    self_type: cel_check.CelType | None = None
    for position, rule in enumerate(node.get("x-kubernetes-validations") or ()):
        rule_path = index(child(path, "x-kubernetes-validations"), position)
        expression = (rule.get("rule") or "").strip()
        if not expression:
            continue
        summary = _summary(expression)
        if summary is None:
            return []  # no CEL support installed: no rule is checked
        if summary.tree is not None and self_type is None:
            self_type = cel_check.self_type(node, placement.resource_root, placement.place)
        problem, cost = _compile_problem(summary, expression, node, placement.resource_root, self_type, "rule")
        rule_cost = _times_cardinality(cost, node, placement) if problem is None else 0
        bounds = _bounds(cost, placement) if problem is None else ()
        budget = cel_budget.rule_budget_error(child(rule_path, "rule"), "estimated rule cost", rule_cost, bounds)
        if budget is not None:
            errors.append(budget)
        if ledger is not None:
            ledger.observe(child(rule_path, "rule"), rule_cost, bounds)
        if problem is not None:
            errors.append(invalid(child(rule_path, "rule"), rule, problem))
        message_expression = (rule.get("messageExpression") or "").strip()
        message_summary = _summary(message_expression) if message_expression else None
        if message_summary is not None:
            if message_summary.tree is not None and self_type is None:
                self_type = cel_check.self_type(node, placement.resource_root, placement.place)
            message_problem, message_cost = _compile_problem(
                message_summary, message_expression, node, placement.resource_root, self_type, "messageExpression"
            )
            message_path = child(rule_path, "messageExpression")
            if message_problem is not None:
                errors.append(invalid(message_path, rule, message_problem))
            elif message_cost is not None:
                message_bounds = message_cost.hints
                budget = cel_budget.rule_budget_error(
                    message_path, "estimated messageExpression cost", message_cost.cost, message_bounds
                )
                if budget is not None:
                    errors.append(budget)
                if ledger is not None:
                    ledger.observe(message_path, message_cost.cost, message_bounds)
        if problem is not None and summary.syntax_error is not None:
            continue
        transition = any(name == "oldSelf" for name, _, _ in summary.free_identifiers)
        if transition and placement.uncorrelatable_within is not None:
            detail = (
                "oldSelf cannot be used on the uncorrelatable portion of the schema within "
                f"{placement.uncorrelatable_within}"
            )
            errors.append(invalid(child(rule_path, "rule"), expression, detail))
        if rule.get("optionalOldSelf") and not transition:
            errors.append(
                invalid(child(rule_path, "optionalOldSelf"), True, "may not be set if oldSelf is not used in rule")
            )
    return errors


def _times_cardinality(cost: cel_check.Analysis | None, node: dict[str, Any], placement: Placement) -> int:
    """The rule's cost times how often it may run (apiextensions' getExpressionCost)."""
    if cost is None:
        return 0
    if placement.cardinality is not None:
        return cel_budget.times(cost.cost, placement.cardinality)
    self_type = cel_check.self_type(node, placement.resource_root, placement.place)
    return cel_budget.times(cost.cost, cel_budget.fallback_cardinality(self_type.min_size))


def _bounds(cost: cel_check.Analysis | None, placement: Placement) -> tuple[tuple[str, str], ...]:
    found: dict[tuple[str, str], None] = dict.fromkeys(
        placement.unbounded_within if placement.cardinality is None else ()
    )
    for bound in cost.hints if cost is not None else ():
        found.setdefault(bound, None)
    return tuple(found)


def _compile_problem(
    summary: Summary,
    expression: str,
    node: dict[str, Any],
    resource_root: bool,
    self_type: cel_check.CelType | None,
    kind: str,
) -> tuple[str | None, cel_check.Analysis | None]:
    """(the API server's detail for a `kind` ("rule" or "messageExpression") that does not compile, or None;
    the type check's analysis when there is one)."""
    failed = "compilation failed: " if kind == "rule" else "messageExpression compilation failed: "
    if summary.syntax_error is not None:
        first_line = summary.syntax_error.splitlines()[0] if summary.syntax_error else "syntax error"
        return f"{failed}ERROR: <input>: {first_line}", None
    if not summary.parsed:
        return None, None
    if summary.tree is not None and self_type is not None:
        analysis = cel_check.analyze(summary.tree, expression, self_type)
        if analysis.errors:
            return failed + "\n".join(analysis.errors), None
        if kind == "rule" and analysis.output.kind not in ("bool", "unknown", "dyn"):
            return "cel expression must evaluate to a bool", None
        if kind == "messageExpression" and analysis.output.kind not in ("string", "unknown", "dyn"):
            return "messageExpression must evaluate to a string", None
        return None, analysis
    for name, line, column in summary.free_identifiers:
        if name not in _KNOWN_GLOBALS:
            return f"{failed}ERROR: <input>:{line}:{column}: undeclared reference to '{name}' (in container '')", None
    if summary.bad_has is not None:
        return failed + summary.bad_has, None
    undefined = _undefined_field(summary, node, resource_root)
    return (None if undefined is None else failed + undefined), None


# -- parses, summarised once per expression (and kept across runs) ------------------------------------------------

_summaries: SummaryCache | None = None


class _NoCel(Exception):
    """cel-python is not installed (or does not import): CEL rules are not checked."""


def _summary(expression: str) -> Summary | None:
    """What the checks need from parsing `expression`; None without cel-python. Parses (loading cel-python and
    its parser) only for an expression neither this process nor the on-disk cache has seen."""
    global _summaries
    if _summaries is None:
        state = cel_summary.code_state([__file__, cel_summary.__file__, cel.__file__, cel_ast.__file__])
        _summaries = SummaryCache(cel_summary.cache_file() if state is not None else None, state or [])
    try:
        return _summaries.get(expression, _summarize)
    except _NoCel:
        return None


def _summarize(expression: str) -> Summary:
    if not cel.available():
        raise _NoCel
    load_cel_parser()
    syntax = cel.parse_error(expression)
    if syntax is not None:
        return Summary(syntax, False, (), None, ())
    tree = cel.parse_tree(expression)
    if tree is None:
        return Summary(None, False, (), None, ())
    reduced = None if _uses_optional_syntax(expression) else cel_ast.reduce(tree, expression)
    return Summary(
        None,
        True,
        tuple(_free_identifier_tokens(tree)),
        _invalid_has_argument(tree),
        tuple(_field_chains(tree)),
        reduced,
    )


def _uses_optional_syntax(expression: str) -> bool:
    """`x.?f`, `x[?k]`: parsed here only after rewriting, so not type-checked or costed."""
    code = cel.code_outside_strings(expression)
    return ".?" in code or "[?" in code


def _invalid_has_argument(tree: Any) -> str | None:
    """cel-go's has() macro only accepts a field selection (``has(self.x)``); celpy accepts any."""
    for sub in tree.iter_subtrees_topdown():
        if sub.data != "ident_arg":
            continue
        tokens = _tokens_of(sub)
        if not tokens or str(tokens[0]) != "has":
            continue
        arguments = _subtrees(_subtrees(sub)[0]) if _subtrees(sub) else []
        if len(arguments) != 1 or not _is_field_selection(arguments[0]):
            line = getattr(tokens[0], "line", 1)
            column = getattr(tokens[0], "column", 1) - 1
            return f"ERROR: <input>:{line}:{column}: invalid argument to has() macro"
    return None


def _is_field_selection(expr: Any) -> bool:
    node = expr
    while hasattr(node, "data") and node.data not in ("member_dot",):
        subs = _subtrees(node)
        if len(subs) != 1 or _tokens_of(node):
            return False
        node = subs[0]
    return hasattr(node, "data") and node.data == "member_dot"


# -- Lark tree helpers -----------------------------------------------------------------------


def _tokens_of(tree: Any) -> list[Any]:
    return [c for c in getattr(tree, "children", []) if not hasattr(c, "data")]


def _subtrees(tree: Any) -> list[Any]:
    return [c for c in getattr(tree, "children", []) if hasattr(c, "data")]


def _single_identifier(expr: Any) -> str | None:
    """The identifier if ``expr`` is just a bare name (a macro's bound variable)."""
    node = expr
    while hasattr(node, "data") and node.data != "ident":
        subs = _subtrees(node)
        if len(subs) != 1 or _tokens_of(node):
            return None
        node = subs[0]
    if hasattr(node, "data") and node.data == "ident":
        tokens = _tokens_of(node)
        return str(tokens[0]) if tokens else None
    return None


def _free_identifier_tokens(tree: Any, bound: frozenset[str] = frozenset()) -> list[tuple[str, int, int]]:
    found: list[tuple[str, int, int]] = []
    _collect_free(tree, bound, found)
    return found


def _collect_free(tree: Any, bound: frozenset[str], found: list[tuple[str, int, int]]) -> None:
    if not hasattr(tree, "data"):
        return
    if tree.data == "ident":
        for token in _tokens_of(tree):
            if str(token) not in bound:
                found.append((str(token), getattr(token, "line", 1), getattr(token, "column", 1) - 1))
        return
    if tree.data == "member_dot_arg":
        subs = _subtrees(tree)
        tokens = _tokens_of(tree)
        method = str(tokens[0]) if tokens else ""
        target = subs[0] if subs else None
        arguments = _subtrees(subs[1]) if len(subs) > 1 else []
        if target is not None:
            _collect_free(target, bound, found)
        if method in _MACROS and arguments:
            variables = []
            for argument in arguments[:-1]:
                name = _single_identifier(argument)
                if name is None:
                    break
                variables.append(name)
            if variables:
                inner = bound | frozenset(variables)
                for argument in arguments[len(variables) :]:
                    _collect_free(argument, inner, found)
                return
        for argument in arguments:
            _collect_free(argument, bound, found)
        return
    if tree.data == "ident_arg":
        for sub in _subtrees(tree):
            _collect_free(sub, bound, found)
        return
    for sub in _subtrees(tree):
        _collect_free(sub, bound, found)


def _member_chain(tree: Any) -> list[str] | None:
    """``['self', 'a', 'b']`` for the tree of ``self.a.b``; None for anything else."""
    if not hasattr(tree, "data"):
        return None
    if tree.data == "member_dot":
        subs = _subtrees(tree)
        tokens = _tokens_of(tree)
        if not subs or not tokens:
            return None
        base = _member_chain(subs[0])
        return None if base is None else [*base, str(tokens[-1])]
    if tree.data in ("member", "primary"):
        subs = _subtrees(tree)
        return _member_chain(subs[0]) if len(subs) == 1 and not _tokens_of(tree) else None
    if tree.data == "ident":
        tokens = _tokens_of(tree)
        return [str(tokens[0])] if tokens else None
    return None


def _cel_fields(node: dict[str, Any], resource_root: bool) -> dict[str, Any] | None:
    """CEL-visible fields of an object node, or None when any name is allowed (maps, dyn)."""
    if node.get("type") != "object" or node.get("x-kubernetes-preserve-unknown-fields"):
        return None
    if isinstance(node.get("additionalProperties"), dict | bool) and not node.get("properties"):
        return None
    fields: dict[str, Any] = {}
    embedded = resource_root or bool(node.get("x-kubernetes-embedded-resource"))
    for name, prop in (node.get("properties") or {}).items():
        escaped = escape_property(name)
        if escaped is not None:
            fields[escaped] = prop
    if embedded:
        fields.setdefault("apiVersion", {"type": "string"})
        fields.setdefault("kind", {"type": "string"})
        fields["metadata"] = {
            "type": "object",
            "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}},
        }
    return fields


def _field_chains(tree: Any) -> list[tuple[tuple[str, ...], int, int]]:
    """Every `self.a.b` / `oldSelf.a` chain, top-down, with the line and column of its last name."""
    chains: list[tuple[tuple[str, ...], int, int]] = []
    for sub in tree.iter_subtrees_topdown():
        if sub.data != "member_dot":
            continue
        chain = _member_chain(sub)
        if not chain or chain[0] not in ("self", "oldSelf"):
            continue
        tokens = _tokens_of(sub)
        token = tokens[-1] if tokens else None
        chains.append((tuple(chain), getattr(token, "line", 1), getattr(token, "column", 1) - 1))
    return chains


def _undefined_field(summary: Summary, node: dict[str, Any], resource_root: bool) -> str | None:
    for chain, line, column in summary.field_chains:
        current: Any = node
        is_root = resource_root
        for name in chain[1:]:
            fields = _cel_fields(current, is_root) if isinstance(current, dict) else None
            if fields is None:
                break
            if name not in fields:
                return f"ERROR: <input>:{line}:{column}: undefined field '{name}'"
            current = fields[name]
            is_root = False
    return None


_Bounds = tuple[tuple[str, str], ...]
# The costs a clean subtree's rules added to the ledger, relative to the subtree's path, by the memo's verdict key:
# a skipped subtree adds them again, so that skipping never changes a schema's total.
_clean_costs: dict[tuple[str, int | None, Any], list[tuple[str, int, _Bounds]]] = {}


def rule_errors(
    root: dict[str, Any],
    root_path: str,
    check: Callable[[dict[str, Any], str, Placement], list[FieldError]],
    memo: SchemaMemo | None = None,
    family: str = "",
    ledger: Ledger | None = None,
) -> list[FieldError]:
    """The errors ``check(node, path, placement)`` finds at every structural node that has rules, in walk order.

    With a ``memo``, subtrees where ``family``'s check found nothing before (same content, same placement
    flags) are skipped; ``check`` must then depend on the subtree's content and placement only. When `check`
    records costs in `ledger`, a skipped subtree's costs are recorded again from the time it was checked.
    """
    errors: list[FieldError] = []

    def descend(node: Any, path: str, where: _Where) -> None:
        if not isinstance(node, dict):
            return
        if memo is None:
            visit(node, path, where)
            return
        if not memo.has_rules(node):
            return  # no rule at or below: nothing to find, nothing to cost
        context: Any = (where.uncorrelatable is not None, where.is_root, where.cardinality)
        if ledger is not None:  # recorded costs carry hints naming places: replayed only where they were made
            context = (*context, where.place, where.unbounded)
        if memo.is_clean(family, node, context):
            if ledger is not None:
                for suffix, cost, bounds in _clean_costs.get((family, memo.key_of(node), context), ()):
                    ledger.observe(path + suffix, cost, bounds)
            return
        found = len(errors)
        observed = len(ledger.entries) if ledger is not None else 0
        visit(node, path, where)
        if len(errors) == found:
            memo.record_clean(family, node, context)
            if ledger is not None:
                _clean_costs[(family, memo.key_of(node), context)] = [
                    (entry_path[len(path) :], cost, bounds) for entry_path, cost, bounds in ledger.entries[observed:]
                ]

    def visit(node: dict[str, Any], path: str, where: _Where) -> None:
        if node.get("x-kubernetes-validations"):
            placement = Placement(
                where.uncorrelatable,
                where.is_root or bool(node.get("x-kubernetes-embedded-resource")),
                where.cardinality,
                where.place,
                where.unbounded,
            )
            errors.extend(check(node, path, placement))
        atomic_map = node.get("x-kubernetes-map-type") == "atomic"
        cardinality, unbounded = _child_cardinality(node, where)
        for name, prop in (node.get("properties") or {}).items():
            descend(
                prop,
                key(child(path, "properties"), name),
                _Where(
                    where.uncorrelatable or (path if atomic_map else None),
                    False,
                    cardinality,
                    f"{where.place}.{name}" if where.place else name,
                    unbounded,
                ),
            )
        if isinstance(node.get("additionalProperties"), dict):
            descend(
                node["additionalProperties"],
                child(path, "additionalProperties"),
                _Where(where.uncorrelatable, False, cardinality, f"{where.place}[*]", unbounded),
            )
        if isinstance(node.get("items"), dict):
            list_map = node.get("x-kubernetes-list-type") == "map"
            descend(
                node["items"],
                child(path, "items"),
                _Where(
                    where.uncorrelatable or (None if list_map else path),
                    False,
                    cardinality,
                    f"{where.place}[*]",
                    unbounded,
                ),
            )

    descend(root, root_path, _Where(None, True, 1, "", ()))
    return errors


@dataclass(frozen=True)
class _Where:
    """What a node inherits from its ancestors (see `Placement`)."""

    uncorrelatable: str | None
    is_root: bool
    cardinality: int | None
    place: str
    unbounded: _Bounds


def _child_cardinality(node: dict[str, Any], where: _Where) -> tuple[int | None, _Bounds]:
    """How often a child of `node` may occur (apiextensions' extractMaxElements times the node's own), and the
    bounds that are missing on the way down."""
    kind = node.get("type")
    keyword = "maxProperties" if kind == "object" else "maxItems"
    if kind == "object" and node.get("additionalProperties") is None:
        factor: int | None = 1
    elif kind in ("object", "array"):
        bound = node.get(keyword)
        factor = max(bound, 0) if isinstance(bound, int) and not isinstance(bound, bool) else None
    else:
        factor = 1
    if factor is None:
        return None, (*where.unbounded, (keyword, where.place))
    if where.cardinality is None:
        return None, where.unbounded
    return cel_budget.times(where.cardinality, factor) if factor else 0, where.unbounded
