"""All checks of one CRD schema, gated in the API server's order.

Per-node OpenAPI checks always run. The structural conversion error shows only when nothing
else failed. Default checks need a structural schema; CEL compilation needs valid defaults
and no schema error at or below the rule's node.
"""

from __future__ import annotations

from typing import Any

from pyop.schema.errors import FieldError
from pyop_scaffold.manifests.acceptance import cel_rules
from pyop_scaffold.manifests.acceptance.cel_budget import Ledger
from pyop_scaffold.manifests.acceptance.cel_rules import Placement
from pyop_scaffold.manifests.acceptance.defaults import default_errors
from pyop_scaffold.manifests.acceptance.memo import SchemaMemo
from pyop_scaffold.manifests.acceptance.openapi_rules import openapi_errors
from pyop_scaffold.manifests.acceptance.structural import new_structural_error, structural_errors


def _within(error_path: str, node_path: str) -> bool:
    return error_path == node_path or error_path.startswith((node_path + ".", node_path + "["))


def schema_errors(
    root: dict[str, Any], root_path: str, status_enabled: bool, memo: SchemaMemo | None = None
) -> list[FieldError]:
    """Every error of one version's schema; `memo` skips subtrees where a rule family found nothing before."""
    errors = openapi_errors(root, root_path, status_enabled, memo)
    errors.extend(cel_rules.rule_errors(root, root_path, _shape_check, memo, "rule-shape"))

    conversion_problem = new_structural_error(root, root_path, memo)
    if conversion_problem is not None:
        return errors or [conversion_problem]
    structural = structural_errors(root, root_path, memo)
    if structural:
        return errors + structural
    defaults = default_errors(root, root_path, memo)
    if defaults:
        return errors + defaults

    blocking = [e.field for e in errors if ".x-kubernetes-validations[" not in e.field]

    ledger = Ledger([])

    def compile_node(node: dict[str, Any], path: str, placement: Placement) -> list[FieldError]:
        if any(_within(field, path) for field in blocking):
            return []
        return cel_rules.compile_errors(node, path, placement, ledger)

    # A blocked node reports nothing whatever its rules say, so "nothing found" is a verdict worth remembering only
    # when nothing blocks.
    errors.extend(
        cel_rules.rule_errors(root, root_path, compile_node, memo if not blocking else None, "rule-compile", ledger)
    )
    errors.extend(ledger.errors(root_path))  # the schema's total, after all else (validation.go)
    return errors


def _shape_check(node: dict[str, Any], path: str, _placement: Placement) -> list[FieldError]:
    return cel_rules.shape_errors(node, path)


def has_defaults(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    if node.get("default") is not None:
        return True
    children = list((node.get("properties") or {}).values()) + [node.get("items"), node.get("additionalProperties")]
    return any(has_defaults(sub) for sub in children)
