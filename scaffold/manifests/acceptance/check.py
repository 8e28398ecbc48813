"""``check_crd``: would kube-apiserver accept this CustomResourceDefinition on create?"""

from __future__ import annotations

import json
from typing import Any, Final

from pyop.schema.errors import FieldError, index, invalid, too_long
from pyop_scaffold.manifests.acceptance import object_rules
from pyop_scaffold.manifests.acceptance.decoding import decoding_errors
from pyop_scaffold.manifests.acceptance.memo import CheckMemos
from pyop_scaffold.manifests.acceptance.paths import PathStyle, version_paths
from pyop_scaffold.manifests.acceptance.schema_rules import has_defaults, schema_errors

LAST_APPLIED_ANNOTATION: Final = "kubectl.kubernetes.io/last-applied-configuration"
TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * 1024


def check_crd(
    crd: dict[str, Any],
    *,
    path_style: PathStyle = PathStyle.APISERVER,
    client_side_apply: bool = False,
) -> list[FieldError]:
    """Every error the API server would report when creating ``crd`` (``[]`` = accepted).

    ``path_style=PathStyle.V1`` names places in the v1 document instead of the API server's
    internal (hoisted) paths. ``client_side_apply=True`` adds the annotation-size error
    ``kubectl apply`` without ``--server-side`` runs into for very large CRDs.
    """
    memos = CheckMemos()
    unknown = decoding_errors(crd, memos)
    if unknown:
        return unknown  # strict decoding fails before any validation

    spec: dict[str, Any] = crd.get("spec") or {}
    versions: list[dict[str, Any]] = list(spec.get("versions") or [])
    paths = version_paths(versions, path_style)

    errors = object_rules.metadata_errors(crd)
    errors += object_rules.group_and_scope_errors(spec)
    errors += object_rules.versions_list_errors(versions)
    errors += object_rules.names_errors(spec.get("names") or {})
    errors += object_rules.schema_required_errors(versions, paths)
    errors += _per_version_errors(versions, paths, memos)
    errors += object_rules.conversion_errors(spec, path_style)
    errors += object_rules.preserve_unknown_fields_errors(spec)
    if spec.get("preserveUnknownFields") and any(
        has_defaults((v.get("schema") or {}).get("openAPIV3Schema")) for v in versions
    ):
        errors.append(
            invalid("spec.preserveUnknownFields", True, "must be false in order to use defaults in the schema")
        )
    errors += object_rules.api_approval_errors(crd)
    if client_side_apply:
        errors += _annotation_size_errors(crd)
    return errors


def _per_version_errors(versions: list[dict[str, Any]], paths: list[Any], memos: CheckMemos) -> list[FieldError]:
    errors: list[FieldError] = []
    any_status = any((v.get("subresources") or {}).get("status") is not None for v in versions)
    reported: set[str] = set()

    def once(base: str) -> bool:
        if base in reported:
            return False
        reported.add(base)
        return True

    for position, (version, where) in enumerate(zip(versions, paths, strict=True)):
        version_path = index("spec.versions", position)
        errors += object_rules.deprecation_errors(version, version_path)
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if isinstance(schema, dict) and once(where.schema):
            status_enabled = (
                any_status if where.schema_hoisted else ((version.get("subresources") or {}).get("status") is not None)
            )
            errors += schema_errors(schema, where.schema, status_enabled, memos.for_schema(schema))
        if once(where.subresources):
            errors += object_rules.subresource_errors(version.get("subresources"), where.subresources)
        if once(where.columns):
            for column_position, column in enumerate(version.get("additionalPrinterColumns") or ()):
                errors += object_rules.column_errors(
                    column, index(where.columns, column_position), where.column_json_path_key
                )
        selectable = version.get("selectableFields") or []
        if selectable and once(where.selectable_fields):
            errors += object_rules.selectable_field_errors(selectable, schema, where.selectable_fields)
    return errors


def _annotation_size_errors(crd: dict[str, Any]) -> list[FieldError]:
    annotations = dict((crd.get("metadata") or {}).get("annotations") or {})
    annotations[LAST_APPLIED_ANNOTATION] = json.dumps(crd, separators=(",", ":")) + "\n"
    total = sum(len(k) + len(v) for k, v in annotations.items())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        return [too_long("metadata.annotations", TOTAL_ANNOTATION_SIZE_LIMIT)]
    return []


def format_errors(crd_name: str, errors: list[FieldError]) -> str:
    """The API server's message: one error inline, several as ``* ...`` lines."""
    prefix = f'The CustomResourceDefinition "{crd_name}" is invalid: '
    if len(errors) == 1:
        return prefix + str(errors[0])
    return prefix + "".join(f"\n* {error}" for error in errors)


__all__ = ["PathStyle", "check_crd", "format_errors"]
