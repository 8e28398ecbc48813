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
from pyop.schema.normalization import normalized_shared
from pyop.schema.pruning import prune, unknown_fields
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
    share: bool = False,
) -> object:
    """Prune, drop non-nullable nulls, then default: the API server's order before validation.

    ``obj`` is never modified. The result is a new value unless ``share``: then it is ``obj``
    itself when nothing changes, or a new value sharing every untouched subtree with ``obj``,
    and neither may be modified in place afterwards. That saves a copy of the object per write
    for a caller that never mutates what it stores (the test API server).
    """
    normalized = normalized_shared(obj, schema, resource_root=resource_root)
    return normalized if share else copy_json(normalized)
