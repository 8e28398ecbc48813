"""Validate, default and prune objects against a CRD's structural OpenAPI v3 schema.

This is what kube-apiserver does to a custom resource on every write, reproduced so that
``pyop.testing``'s API server and ``pyop make manifests --check`` behave like a cluster:

* ``prune`` / ``unknown_fields``: drop (or list) fields the schema does not specify;
* ``prune_nulls`` then ``apply_defaults``: structural defaulting;
* ``validate``: OpenAPI value validation, embedded resources, list-type uniqueness, CEL.

Errors are ``FieldError`` values that print exactly like the API server's field errors.
"""

from pyop.schema.defaulting import apply_defaults, prune_nulls
from pyop.schema.errors import OMITTED, FieldError
from pyop.schema.pruning import prune, unknown_fields
from pyop.schema.validation import validate
from pyop.schema.values import ABSENT

__all__ = [
    "ABSENT",
    "OMITTED",
    "FieldError",
    "apply_defaults",
    "normalize",
    "prune",
    "prune_nulls",
    "unknown_fields",
    "validate",
]


def normalize(obj: object, schema: dict, *, resource_root: bool = True) -> object:  # type: ignore[type-arg]
    """Prune, drop non-nullable nulls, then default: the API server's order before validation."""
    pruned = prune(obj, schema, resource_root=resource_root)
    return apply_defaults(prune_nulls(pruned, schema), schema)
