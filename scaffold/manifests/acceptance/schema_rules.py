"""All checks of one CRD schema, gated in the API server's order.

Per-node OpenAPI checks always run. The structural conversion error shows only when nothing
else failed. Default checks need a structural schema; CEL compilation needs valid defaults
and no schema error at or below the rule's node.
"""

from __future__ import annotations

from typing import Any

from pyop.schema.errors import FieldError
from scaffold.manifests.acceptance import cel_rules
from scaffold.manifests.acceptance.cel_rules import Placement
from scaffold.manifests.acceptance.defaults import default_errors
from scaffold.manifests.acceptance.openapi_rules import openapi_errors
from scaffold.manifests.acceptance.structural import new_structural_error, structural_errors


def _within(error_path: str, node_path: str) -> bool:
    return error_path == node_path or error_path.startswith((node_path + ".", node_path + "["))


def schema_errors(root: dict[str, Any], root_path: str, status_enabled: bool) -> list[FieldError]:
    errors = openapi_errors(root, root_path, status_enabled)
    rule_shape: list[FieldError] = []
    cel_rules.walk_rules(
        root, root_path, lambda node, path, _placement: rule_shape.extend(cel_rules.shape_errors(node, path))
    )
    errors.extend(rule_shape)

    conversion_problem = new_structural_error(root, root_path)
    if conversion_problem is not None:
        return errors or [conversion_problem]
    structural = structural_errors(root, root_path)
    if structural:
        return errors + structural
    defaults = default_errors(root, root_path)
    if defaults:
        return errors + defaults

    blocking = [e.field for e in errors if ".x-kubernetes-validations[" not in e.field]

    def compile_node(node: dict[str, Any], path: str, placement: Placement) -> None:
        if not any(_within(field, path) for field in blocking):
            errors.extend(cel_rules.compile_errors(node, path, placement))

    cel_rules.walk_rules(root, root_path, compile_node)
    return errors


def has_defaults(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    if node.get("default") is not None:
        return True
    children = list((node.get("properties") or {}).values()) + [node.get("items"), node.get("additionalProperties")]
    return any(has_defaults(sub) for sub in children)
