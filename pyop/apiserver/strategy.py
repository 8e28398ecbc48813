"""The typed strategy an aggregated API server's author writes per kind (k8s.io/apiserver's RESTCreateStrategy and
RESTUpdateStrategy, with pydantic models instead of Go structs).

The generic registry (``pyop.apiserver.registry``) already does what every kind gets: schema pruning, defaults and
validation from the model's OpenAPI schema (the same walk ``make manifests`` makes for CRDs), metadata rules,
resourceVersion preconditions, generation, finalizers, the status subresource. A ``Strategy`` adds what is particular
to a kind: hooks that receive the object as the user's model, and return field errors as Kubernetes reports them::

    class FlunderStrategy(Strategy[Flunder]):
        def validate(self, obj: Flunder) -> list[FieldError]:
            if obj.spec.reference == obj.metadata.name:
                return [FieldError.invalid("spec.reference", obj.spec.reference, "may not refer to itself")]
            return []

Every hook is optional: an untouched hook costs nothing (the object is not converted to the model for it).
The adapter (`TypedStrategy`) converts the stored dict to the model, calls the hooks, and writes back what they
changed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from pyop.api.status import StatusCause
from pyop.apiserver.endpoints.printing import NAME, Column, Row
from pyop.apiserver.endpoints.table import crd_cell

T = TypeVar("T", bound=BaseModel)

_UNSET: Any = object()


def _go_value(value: Any) -> str:
    """A value as Go's field errors print it (`Invalid value: "x"`, `Invalid value: 3`)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, default=str, separators=(",", ":"))


@dataclass(frozen=True)
class FieldError:
    """One field error (k8s.io/apimachinery's field.Error): becomes a StatusCause of the 422 Invalid answer.

    ``path`` is the field's path as the API shows it (``spec.size``, ``spec.items[2].name``). Use the
    constructors, which word the message as Kubernetes does."""

    path: str
    message: str
    reason: str = "FieldValueInvalid"

    @classmethod
    def invalid(cls, path: str, value: Any, detail: str) -> FieldError:
        return cls(path, f"Invalid value: {_go_value(value)}: {detail}", "FieldValueInvalid")

    @classmethod
    def required(cls, path: str, detail: str = "") -> FieldError:
        return cls(path, f"Required value: {detail}" if detail else "Required value", "FieldValueRequired")

    @classmethod
    def forbidden(cls, path: str, detail: str) -> FieldError:
        return cls(path, f"Forbidden: {detail}", "FieldValueForbidden")

    @classmethod
    def not_supported(cls, path: str, value: Any, supported: Sequence[str]) -> FieldError:
        allowed = ", ".join(json.dumps(item) for item in supported)
        return cls(
            path, f"Unsupported value: {_go_value(value)}: supported values: {allowed}", "FieldValueNotSupported"
        )

    @classmethod
    def duplicate(cls, path: str, value: Any) -> FieldError:
        return cls(path, f"Duplicate value: {_go_value(value)}", "FieldValueDuplicate")

    def cause(self) -> StatusCause:
        return StatusCause(self.reason, self.message, self.path)


@dataclass(frozen=True)
class TableColumn:
    """A column of ``kubectl get`` (meta.k8s.io/v1 Table), after NAME. ``json_path`` picks the cell from the object
    as an additionalPrinterColumn does (``.spec.size``); without it, `Strategy.table_cells` supplies the cells.
    ``type``: integer, number, string, boolean or date (a date cell prints as an age)."""

    name: str
    type: str = "string"
    json_path: str = ""
    description: str = ""
    format: str = ""
    priority: int = 0


class Strategy(Generic[T]):
    """Per-kind hooks; subclass with your model as ``T`` and override what your kind needs.

    Order on create: the schema's pruning/defaults/validation, then `prepare_for_create`, `default`, `validate`.
    On update (and on a status update): the schema's, then `prepare_for_update`, `default`, `validate_update`.
    The generic registry has already kept ``status`` out of main-resource writes and ``spec`` out of status writes,
    and set metadata (uid, generation, resourceVersion): the hooks see the object as it would be stored.
    """

    def prepare_for_create(self, obj: T) -> None:
        """Clear or set fields the client may not choose on create (a status phase, a computed field)."""

    def prepare_for_update(self, obj: T, old: T) -> None:
        """Keep fields the client may not change on update (``old`` is the stored object). Called for updates of
        the object and of its status alike: do not copy ``status`` or ``spec`` over here, the registry already
        keeps each out of the other's writes."""

    def default(self, obj: T) -> None:
        """Defaults that need code (those that do not belong in the model as field defaults)."""

    def validate(self, obj: T) -> list[FieldError]:
        """Field errors of a new object (nothing: valid)."""
        return []

    def validate_update(self, obj: T, old: T) -> list[FieldError]:
        """Field errors of an update; by default the new object's own `validate` (immutability checks go here)."""
        return self.validate(obj)

    def table_columns(self) -> list[TableColumn] | None:
        """``kubectl get``'s columns after NAME; None: the model's ``+kubebuilder:printcolumn`` markers (or AGE)."""
        return None

    def table_cells(self, obj: T) -> list[Any] | None:
        """The cells of the columns without a ``json_path``, in order; None: every column has a path."""
        return None


def _overrides(strategy: Strategy[Any], name: str) -> bool:
    return getattr(type(strategy), name) is not getattr(Strategy, name)


class ModelMismatch(Exception):
    """An object the model cannot read (the schema let it through: a model stricter than its markers)."""

    def __init__(self, causes: list[StatusCause]) -> None:
        super().__init__("; ".join(cause.message for cause in causes))
        self.causes = causes


class TypedStrategy:
    """The adapter between the generic registry's dict objects and a user's typed `Strategy`."""

    def __init__(self, model: type[BaseModel], strategy: Strategy[Any], kind: str, group: str) -> None:
        self.model = model
        self.strategy = strategy
        self.kind = kind
        self.group = group
        self._mutates = any(
            _overrides(strategy, hook) for hook in ("prepare_for_create", "prepare_for_update", "default")
        )
        self._validates = any(_overrides(strategy, hook) for hook in ("validate", "validate_update"))

    @property
    def active(self) -> bool:
        """Whether any write hook is overridden (else writes skip the model conversion entirely)."""
        return self._mutates or self._validates

    def typed(self, obj: dict[str, Any]) -> Any:
        """``obj`` as the model (`ModelMismatch` with the causes when it does not fit)."""
        try:
            return self.model.model_validate(obj)
        except ValidationError as error:
            raise ModelMismatch(_pydantic_causes(error)) from None

    def apply(self, obj: dict[str, Any], old: dict[str, Any] | None) -> tuple[dict[str, Any], list[StatusCause]]:
        """Run the write hooks on a schema-admitted object: the object as they changed it, and their field errors
        (``old``: the stored object of an update, None on create)."""
        if not self.active:
            return obj, []
        try:
            typed = self.typed(obj)
            typed_old = self.typed(old) if old is not None else None
        except ModelMismatch as mismatch:
            return obj, mismatch.causes
        hooks = self.strategy
        if typed_old is None:
            hooks.prepare_for_create(typed)
        else:
            hooks.prepare_for_update(typed, typed_old)
        hooks.default(typed)
        errors = hooks.validate(typed) if typed_old is None else hooks.validate_update(typed, typed_old)
        if errors:
            return obj, [error.cause() for error in errors]
        if not self._mutates:
            return obj, []
        changed = _dump(typed)
        # Metadata is the registry's: the hooks may set labels, annotations and finalizers, nothing else of it.
        metadata = dict(obj["metadata"])
        for key in ("labels", "annotations", "finalizers"):
            value = (changed.get("metadata") or {}).get(key)
            if value:
                metadata[key] = value
            else:
                metadata.pop(key, None)
        changed["metadata"] = metadata
        return changed, []

    def printer(self) -> tuple[list[Column], Row] | None:
        """The strategy's Table columns and row function (None: the model's printcolumn markers'): path cells as
        an additionalPrinterColumn's, the others from `Strategy.table_cells`."""
        columns = self.strategy.table_columns()
        if columns is None:
            return None
        specs = [
            {"name": c.name, "type": c.type, "jsonPath": c.json_path, "format": c.format, "priority": c.priority}
            for c in columns
        ]
        computed = not all(column.json_path for column in columns)

        def row(obj: dict[str, Any], now: datetime) -> list[Any]:
            cells = iter(self._cells(obj) if computed else ())
            return [
                obj["metadata"]["name"],
                *(crd_cell(spec, obj, now) if spec["jsonPath"] else next(cells, None) for spec in specs),
            ]

        header = [NAME, *((c.name, c.type, c.format, c.description, c.priority) for c in columns)]
        return header, row

    def _cells(self, obj: dict[str, Any]) -> list[Any]:
        try:
            return list(self.strategy.table_cells(self.typed(obj)) or [])
        except ModelMismatch:
            return []


def _dump(model: BaseModel) -> dict[str, Any]:
    to_dict = getattr(model, "to_dict", None)
    if callable(to_dict):
        result: dict[str, Any] = to_dict()
        return result
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def _pydantic_causes(error: ValidationError) -> list[StatusCause]:
    causes = []
    for item in error.errors():
        path = ".".join(str(part) for part in item.get("loc", ()))
        causes.append(StatusCause("FieldValueInvalid", f"Invalid value: {item.get('msg', '')}", path))
    return causes


__all__ = ["FieldError", "Strategy", "TableColumn", "TypedStrategy"]
