"""Default checks (``schema/defaulting/validation.go``), run only on a structural schema.

Each ``default`` must survive pruning unchanged and must validate against its own node's
schema (value rules, list-type uniqueness, embedded resources, CEL). Validation reuses
``pyop.schema`` so the generator and the test API server agree on what is valid.
"""

from __future__ import annotations

from typing import Any, Final

from pyop.schema import prune, validate
from pyop.schema.errors import FieldError, child, invalid, key
from pyop_scaffold.manifests.acceptance.memo import SchemaMemo

_META_FIELDS: Final = frozenset({"metadata", "kind", "apiVersion"})


def default_errors(root: dict[str, Any], root_path: str, memo: SchemaMemo | None = None) -> list[FieldError]:
    errors: list[FieldError] = []
    _visit(root, root_path, root, False, errors, memo)
    return errors


def _visit(
    node: Any, path: str, resource_root: Any, inside_meta: bool, errors: list[FieldError], memo: SchemaMemo | None
) -> None:
    if not isinstance(node, dict):
        return
    if memo is None:
        _visit_node(node, path, resource_root, inside_meta, errors, memo)
        return
    # What the ancestors hand down: whether this node is the resource root and whether it is inside metadata.
    context = (node is resource_root, inside_meta)
    if memo.is_clean("defaults", node, context):
        return
    found = len(errors)
    _visit_node(node, path, resource_root, inside_meta, errors, memo)
    if len(errors) == found:
        memo.record_clean("defaults", node, context)


def _visit_node(
    node: dict[str, Any],
    path: str,
    resource_root: Any,
    inside_meta: bool,
    errors: list[FieldError],
    memo: SchemaMemo | None,
) -> None:
    if node.get("x-kubernetes-embedded-resource"):
        inside_meta = False
        resource_root = node
    default = node.get("default")
    if default is not None and not inside_meta:
        default_path = child(path, "default")
        is_resource = node is resource_root or bool(node.get("x-kubernetes-embedded-resource"))
        if prune(default, node, resource_root=is_resource) != default:
            errors.append(invalid(default_path, default, "must not have unknown fields"))
        else:
            # Kubernetes evaluates transition rules on defaults with oldSelf = the default itself.
            errors.extend(validate(default, node, default_path, old=default, resource_root=is_resource))
    # Defaults are forbidden under additionalProperties' object metadata and not followed there.
    if isinstance(node.get("items"), dict):
        _visit(node["items"], child(path, "items"), resource_root, inside_meta, errors, memo)
    for name, prop in (node.get("properties") or {}).items():
        sub_inside_meta = inside_meta or (node is resource_root and name == "metadata")
        _visit(prop, key(child(path, "properties"), name), resource_root, sub_inside_meta, errors, memo)
