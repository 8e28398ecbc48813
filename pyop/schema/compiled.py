"""A served version's schema compiled once for its writes: normalize, unknown fields and validate as closures.

The API server admits every write of a custom resource against the same schema until its CRD changes, so the
registry keeps one ``CompiledSchema`` per served version (``ResourceType.compiled_schema``: a changed CRD makes
new ResourceTypes, so a compiled form never outlives its schema). Each method gives exactly what the interpreting
function of ``pyop.schema`` of the same name gives (``normalize(..., share=True)``, ``unknown_fields``,
``validate``), which stay the reference: tests/schema/test_schema_compiled.py compares them on generated schemas
and objects. A schema that contains itself (only a Python-built one can) is interpreted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyop.schema.compiled_memo import CyclicSchema, Guard
from pyop.schema.compiled_normalization import (
    Collect,
    Transform,
    compile_normalization,
    compile_unknown_fields,
)
from pyop.schema.compiled_validation import Node, compile_node
from pyop.schema.errors import FieldError
from pyop.schema.normalization import normalized_shared
from pyop.schema.pruning import unknown_fields as interpreted_unknown_fields
from pyop.schema.validation import Walk, walk_errors
from pyop.schema.validation import validate as interpreted_validate
from pyop.schema.values import ABSENT


class CompiledSchema:
    """One resource schema (its root is a whole custom resource), compiled (see the module docstring)."""

    __slots__ = ("schema", "_normalize", "_unknown", "_validate", "_interpreted")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema: dict[str, Any] = dict(schema)
        self._normalize: Transform | None = None
        self._unknown: Collect | None = None
        self._validate: Node | None = None
        self._interpreted = False
        guard = Guard()
        try:
            self._normalize = compile_normalization(self.schema, guard, root=True)
            self._unknown = compile_unknown_fields(self.schema, guard, root=True)
            self._validate = compile_node(self.schema, guard)
        except CyclicSchema:
            self._interpreted = True

    def normalize(self, obj: Any) -> Any:
        """``pyop.schema.normalize(obj, schema, share=True)``: pruned, null-pruned and defaulted; ``obj`` itself when
        nothing changes, else a new value sharing every untouched subtree (neither may be modified afterwards)."""
        if self._interpreted:
            return normalized_shared(obj, self.schema)
        transform = self._normalize
        return obj if transform is None else transform(obj)

    def unknown_fields(self, obj: Any) -> list[str]:
        """``pyop.schema.unknown_fields(obj, schema)``: the paths pruning drops, in document order."""
        if self._interpreted:
            return interpreted_unknown_fields(obj, self.schema)
        dropped: list[str] = []
        collect = self._unknown
        if collect is not None and isinstance(obj, dict | list):
            collect(obj, "", dropped)
        return dropped

    def validate(self, obj: Any, old: Any = ABSENT) -> list[FieldError]:
        """``pyop.schema.validate(obj, schema, old=old)``: every error the API server reports, in its order."""
        if self._interpreted:
            return interpreted_validate(obj, self.schema, old=old)
        node = self._validate
        assert node is not None
        check = node.check
        if check is None or type(obj) in node.accepts:
            return []
        if not node.rules_below and node.passes(obj):
            return []  # the common valid write: nothing reported, no path built (rules need the full walk)
        walk = Walk(with_rules=True)
        check(walk, obj, "", "", old, True)
        return walk_errors(walk)


class InterpretedSchema:
    """The same three methods by the interpreting functions (the reference, and the path of a schema passed
    without its compiled form)."""

    __slots__ = ("schema",)

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema: dict[str, Any] = dict(schema)

    def normalize(self, obj: Any) -> Any:
        return normalized_shared(obj, self.schema)

    def unknown_fields(self, obj: Any) -> list[str]:
        return interpreted_unknown_fields(obj, self.schema)

    def validate(self, obj: Any, old: Any = ABSENT) -> list[FieldError]:
        return interpreted_validate(obj, self.schema, old=old)


__all__ = ["CompiledSchema", "InterpretedSchema"]
