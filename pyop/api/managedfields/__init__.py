"""Server-side apply's field ownership, shared API machinery: FieldsV1 field sets (``fieldpath``), the schema
view structured-merge-diff merges by (``schema``), values walked by that schema (``typed``) and the managers'
Apply / Update bookkeeping with conflicts (``ownership``). The test API server's apply path uses it; a client
building apply configurations can use the same sets and schema."""

from pyop.api.managedfields.fieldpath import FieldSet, path_string, paths
from pyop.api.managedfields.ownership import (
    APPLY,
    UPDATE,
    ApplyConflict,
    Conflict,
    InvalidManagedFields,
    Manager,
    Managers,
    Scope,
    apply,
    create,
    decode,
    encode,
    encode_with_managers,
    is_reset,
    update,
)
from pyop.api.managedfields.schema import Type, builtin_type, custom_resource_type
from pyop.api.managedfields.typed import SchemaError, compare, merge, to_field_set

__all__ = [
    "APPLY",
    "UPDATE",
    "ApplyConflict",
    "Conflict",
    "FieldSet",
    "InvalidManagedFields",
    "Manager",
    "Managers",
    "SchemaError",
    "Scope",
    "Type",
    "apply",
    "builtin_type",
    "compare",
    "create",
    "custom_resource_type",
    "decode",
    "encode",
    "encode_with_managers",
    "is_reset",
    "merge",
    "path_string",
    "paths",
    "to_field_set",
    "update",
]
