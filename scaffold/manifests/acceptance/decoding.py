"""Strict decoding: keys a v1 CRD may not contain (``v1/types*.go`` JSON field names).

``kubectl apply`` decodes strictly by default and refuses the whole object on the first
unknown key, e.g. an OpenAPI keyword CRDs do not support (``const``, ``examples``,
``$defs``). Paths here are v1 document paths, as in the API server's message.
"""

from __future__ import annotations

from typing import Any, Final

from pyop.schema.errors import FieldError, child, index, invalid, key, unknown_field
from pyop_scaffold.manifests.acceptance.memo import CheckMemos, SchemaMemo

SCHEMA_KEYS: Final = frozenset(
    [
        "id",
        "$schema",
        "$ref",
        "description",
        "type",
        "format",
        "title",
        "default",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "enum",
        "maxProperties",
        "minProperties",
        "required",
        "items",
        "allOf",
        "oneOf",
        "anyOf",
        "not",
        "properties",
        "additionalProperties",
        "patternProperties",
        "dependencies",
        "additionalItems",
        "definitions",
        "externalDocs",
        "example",
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
        "x-kubernetes-validations",
    ]
)
_RULE_KEYS: Final = frozenset({"rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"})
_EXTERNAL_DOCS_KEYS: Final = frozenset({"description", "url"})
_CRD_SHAPE: Final[dict[str, Any]] = {
    "apiVersion": None,
    "kind": None,
    "metadata": None,
    "status": None,
    "spec": {
        "group": None,
        "scope": None,
        "preserveUnknownFields": None,
        "names": {k: None for k in ("plural", "singular", "shortNames", "kind", "listKind", "categories")},
        "conversion": {
            "strategy": None,
            "webhook": {
                "conversionReviewVersions": None,
                "clientConfig": {
                    "url": None,
                    "caBundle": None,
                    "service": {k: None for k in ("namespace", "name", "path", "port")},
                },
            },
        },
        "versions": [
            {
                "name": None,
                "served": None,
                "storage": None,
                "deprecated": None,
                "deprecationWarning": None,
                "schema": {"openAPIV3Schema": "SCHEMA"},
                "subresources": {
                    "status": None,
                    "scale": {k: None for k in ("specReplicasPath", "statusReplicasPath", "labelSelectorPath")},
                },
                "additionalPrinterColumns": [
                    {k: None for k in ("name", "type", "format", "description", "priority", "jsonPath")}
                ],
                "selectableFields": [{"jsonPath": None}],
            }
        ],
    },
}


_FAMILY: Final = "decoding"


def decoding_errors(crd: dict[str, Any], memos: CheckMemos | None = None) -> list[FieldError]:
    """Unknown keys, in document order; `memos` skips schema subtrees already known to hold none."""
    errors: list[FieldError] = []
    _shape(crd, _CRD_SHAPE, "", errors, memos)
    return errors


def _shape(value: Any, shape: Any, path: str, errors: list[FieldError], memos: CheckMemos | None) -> None:
    if shape == "SCHEMA":
        _schema(value, path, errors, memos.for_schema(value) if memos is not None else None)
    elif isinstance(shape, dict) and isinstance(value, dict):
        for name, item in value.items():
            if name not in shape:
                errors.append(unknown_field(child(path, name)))
            elif shape[name] is not None:
                _shape(item, shape[name], child(path, name), errors, memos)
    elif isinstance(shape, list) and isinstance(value, list):
        for position, item in enumerate(value):
            _shape(item, shape[0], index(path, position), errors, memos)


def _schema(node: Any, path: str, errors: list[FieldError], memo: SchemaMemo | None) -> None:
    if not isinstance(node, dict):
        return
    if memo is not None:
        if memo.is_clean(_FAMILY, node):
            return
        found = len(errors)
        _schema_node(node, path, errors, memo)
        if len(errors) == found:
            memo.record_clean(_FAMILY, node)
    else:
        _schema_node(node, path, errors, memo)


def _schema_node(node: dict[str, Any], path: str, errors: list[FieldError], memo: SchemaMemo | None) -> None:
    for name in node:
        if name not in SCHEMA_KEYS:
            errors.append(unknown_field(child(path, name)))
    for name, prop in (node.get("properties") or {}).items():
        _schema(prop, key(child(path, "properties"), name), errors, memo)
    for container in ("patternProperties", "definitions", "dependencies"):
        if isinstance(node.get(container), dict):
            for name, prop in node[container].items():
                _schema(prop, key(child(path, container), name), errors, memo)
    for junctor in ("allOf", "anyOf", "oneOf"):
        for position, sub in enumerate(node.get(junctor) or ()):
            _schema(sub, index(child(path, junctor), position), errors, memo)
    if isinstance(node.get("not"), dict):
        _schema(node["not"], child(path, "not"), errors, memo)
    additional = node.get("additionalProperties")
    if additional is not None and not isinstance(additional, bool | dict):
        errors.append(invalid(child(path, "additionalProperties"), additional, "boolean or JSON schema expected"))
    elif isinstance(additional, dict):
        _schema(additional, child(path, "additionalProperties"), errors, memo)
    items = node.get("items")
    if isinstance(items, dict):
        _schema(items, child(path, "items"), errors, memo)
    elif isinstance(items, list):
        for position, sub in enumerate(items):
            _schema(sub, index(child(path, "items"), position), errors, memo)
    for position, rule in enumerate(node.get("x-kubernetes-validations") or ()):
        for name in rule if isinstance(rule, dict) else ():
            if name not in _RULE_KEYS:
                errors.append(unknown_field(child(index(child(path, "x-kubernetes-validations"), position), name)))
    docs = node.get("externalDocs")
    for name in docs if isinstance(docs, dict) else ():
        if name not in _EXTERNAL_DOCS_KEYS:
            errors.append(unknown_field(child(child(path, "externalDocs"), name)))
