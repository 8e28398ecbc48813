"""Field errors shaped like apimachinery's ``field.Error``.

Kubernetes clients (kubectl, controller-runtime, envtest users) match on the exact
``<path>: <Type>: <bad value>: <detail>`` text, so the rendering here mirrors
``k8s.io/apimachinery/pkg/util/validation/field/errors.go`` instead of inventing a format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final


class _Omitted:
    """Marks an error that carries no bad value (Go's ``omitValue``)."""

    _instance: _Omitted | None = None

    def __new__(cls) -> _Omitted:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "OMITTED"


OMITTED: Final = _Omitted()

REQUIRED: Final = "Required value"
INVALID: Final = "Invalid value"
NOT_SUPPORTED: Final = "Unsupported value"
FORBIDDEN: Final = "Forbidden"
TOO_LONG: Final = "Too long"
TOO_MANY: Final = "Too many"
DUPLICATE: Final = "Duplicate value"
NOT_FOUND: Final = "Not found"
INTERNAL: Final = "Internal error"
# Not a field.ErrorType: the API server refuses the whole request while decoding
# ("strict decoding error: unknown field ...") before any field validation runs.
UNKNOWN_FIELD: Final = "Unknown field"

# apimachinery never prints the bad value for these types, whatever was passed.
_VALUELESS_TYPES: Final = frozenset({REQUIRED, FORBIDDEN, TOO_LONG, INTERNAL, UNKNOWN_FIELD})


@dataclass(frozen=True)
class FieldError:
    """One validation failure, renderable exactly as the API server prints it."""

    type: str
    field: str
    detail: str = ""
    bad_value: object = OMITTED

    def body(self) -> str:
        """The text after ``<path>: `` (apimachinery's ``ErrorBody``)."""
        text = self.type
        if self.type not in _VALUELESS_TYPES and self.bad_value is not OMITTED:
            text += ": " + go_value(self.bad_value)
        if self.detail:
            text += ": " + self.detail
        return text

    def __str__(self) -> str:
        # A nil *field.Path renders as "<nil>" in Go; keep that so root errors look familiar.
        return f"{self.field or '<nil>'}: {self.body()}"


def go_float(number: float) -> str:
    """Format a float as Go's ``%v`` does: shortest digits, ``%e`` from 1e+06 up or below 1e-04."""
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "+Inf" if number > 0 else "-Inf"
    if number == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(number)).normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits))
    decimal_exponent = len(mantissa) + exponent - 1
    prefix = "-" if sign else ""
    if decimal_exponent < -4 or decimal_exponent >= 6:
        tail = mantissa[1:]
        body = mantissa[0] + ("." + tail if tail else "")
        exp_sign = "-" if decimal_exponent < 0 else "+"
        return f"{prefix}{body}e{exp_sign}{abs(decimal_exponent):02d}"
    if exponent >= 0:
        return prefix + mantissa + "0" * exponent
    point = len(mantissa) + exponent
    if point <= 0:
        return prefix + "0." + "0" * (-point) + mantissa
    return prefix + mantissa[:point] + "." + mantissa[point:]


def go_bound(number: int | float) -> str:
    """Render a schema bound as the API server does: bounds are Go float64, so 65536 stays
    ``65536`` but 2147483647 becomes ``2.147483647e+09``."""
    return go_float(float(number))


def go_value(value: Any) -> str:
    """Render a bad value: scalars with ``%v``, strings with ``%q``, the rest as JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def child(path: str, name: str) -> str:
    """``field.Path.Child``: dotted, no leading dot at the root."""
    return f"{path}.{name}" if path else name


def index(path: str, position: int) -> str:
    """``field.Path.Index``."""
    return f"{path}[{position}]"


def key(path: str, name: str) -> str:
    """``field.Path.Key``: map keys are shown unquoted in brackets."""
    return f"{path}[{name}]"


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, path, detail)


def invalid(path: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(INVALID, path, detail, value)


def forbidden(path: str, detail: str = "") -> FieldError:
    return FieldError(FORBIDDEN, path, detail)


def not_supported(path: str, value: Any, supported: list[str]) -> FieldError:
    detail = ""
    if supported:
        detail = "supported values: " + ", ".join(json.dumps(v, ensure_ascii=False) for v in supported)
    return FieldError(NOT_SUPPORTED, path, detail, value)


def too_long(path: str, max_length: int) -> FieldError:
    if max_length < 0:
        return FieldError(TOO_LONG, path, "value is too long")
    unit = "byte" if max_length == 1 else "bytes"
    return FieldError(TOO_LONG, path, f"may not be more than {max_length} {unit}")


def too_many(path: str, actual: int, maximum: int) -> FieldError:
    detail = f"must have at most {maximum} items" if maximum >= 0 else "has too many items"
    return FieldError(TOO_MANY, path, detail, actual if actual >= 0 else OMITTED)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(DUPLICATE, path, "", value)


def internal(path: str, detail: str) -> FieldError:
    return FieldError(INTERNAL, path, detail)


def unknown_field(path: str) -> FieldError:
    return FieldError(UNKNOWN_FIELD, path, f'unknown field "{path}"')
