"""Validate, default and prune objects against a CRD's structural OpenAPI v3 schema.

This is what kube-apiserver does to a custom resource on every write, reproduced so that
``pyop.testing``'s API server and ``pyop make manifests --check`` behave like a cluster:

* ``prune`` / ``unknown_fields``: drop (or list) fields the schema does not specify;
* ``prune_nulls`` then ``apply_defaults``: structural defaulting;
* ``validate``: OpenAPI value validation, embedded resources, list-type uniqueness, CEL.

Errors are ``FieldError`` values that print exactly like the API server's field errors.
"""

from pyop.schema.defaulting import apply_defaults, apply_defaults_in_place, prune_nulls, prune_nulls_in_place
from pyop.schema.errors import OMITTED, FieldError
from pyop.schema.pruning import prune, prune_in_place, unknown_fields
from pyop.schema.validation import validate
from pyop.schema.values import ABSENT, copy_json

__all__ = [
    "ABSENT",
    "OMITTED",
    "FieldError",
    "apply_defaults",
    "copy_json",
    "normalize",
    "prune",
    "prune_nulls",
    "unknown_fields",
    "validate",
]


def normalize(
    obj: object,
    schema: dict,  # type: ignore[type-arg]
    *,
    resource_root: bool = True,
    in_place: bool = False,
) -> object:
    """Prune, drop non-nullable nulls, then default: the API server's order before validation.

    The result is a new value unless ``in_place``: then ``obj`` itself is changed and returned,
    which saves the copy for a caller that owns ``obj`` (the test API server, on every write).
    """
    target = obj if in_place else copy_json(obj)
    prune_in_place(target, schema, resource_root=resource_root)
    prune_nulls_in_place(target, schema)
    return apply_defaults_in_place(target, schema)
