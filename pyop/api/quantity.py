"""Kubernetes resource quantities (`500m`, `1Gi`, `1e3`): parsing and the canonical form kube-apiserver stores.

kube-apiserver decodes every `resource.Quantity` field and writes it back in canonical form, so a client that sends
`cpu: 1000m, memory: 1024Mi` reads back `cpu: "1", memory: 1Gi`. An operator comparing what it sent with what it
reads must compare canonical forms (or it updates forever); `canonical_quantity` is that form, for the test API
server and for any runtime code that needs it.

The rules are apimachinery's (`resource.ParseQuantity`, `Quantity.CanonicalizeBytes`):
- the suffix family is kept: decimal SI (`n u m "" k M G T P E`), binary SI (`Ki ... Ei`), or exponent (`e3`, `E6`);
- decimal values take the largest exponent (a multiple of 3) that leaves an integer mantissa, so `1000m` -> `1`,
  `1500` -> `1500`, `0.5` -> `500m`, `1000` -> `1k`; precision below nano (`n`) is rounded up (away from zero);
- binary values take the largest power of 1024 that divides them (`1024Mi` -> `1Gi`, `1.5Gi` -> `1536Mi`); a binary
  value that is not an integer, or whose magnitude is below 1024, is written as decimal SI (`0.5Ki` -> `512`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation, localcontext
from typing import Final, Literal

QUANTITY_FORMAT_ERROR: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
"""apimachinery's ErrFormatWrong text: what kube-apiserver answers for a value that is not a quantity."""

_QUANTITY: Final = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
_NUMBER: Final = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")
_DECIMAL_SUFFIXES: Final = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXPONENT: Final = {exponent: suffix for suffix, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_BY_POWER: Final = {power // 10: suffix for suffix, power in _BINARY_SUFFIXES.items()}
_EXPONENT_SUFFIX: Final = re.compile(r"^[eE]([-+]?[0-9]+)$")
_MIN_EXPONENT: Final = -9  # nano: the finest scale a canonical quantity keeps
_MAX_EXPONENT: Final = 18  # exa

Format = Literal["DecimalSI", "BinarySI", "DecimalExponent"]


class QuantityError(ValueError):
    """Not a Kubernetes quantity; the message is apimachinery's."""


@dataclass(frozen=True)
class Quantity:
    """An exact quantity value and the suffix family it was written in."""

    value: Decimal
    format: Format

    def canonical(self) -> str:
        return _canonical(self.value, self.format)

    def round_up(self, exponent: int) -> Quantity:
        """The value rounded up (away from zero) to `10**exponent`, as `Quantity.RoundUp(scale)` does."""
        return Quantity(_round_away(self.value, exponent), self.format)


def parse_quantity(text: str | int | float) -> Quantity:
    """Parse a quantity as it appears in JSON: a string, or a bare number (kube-apiserver accepts both)."""
    if isinstance(text, bool):
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    if isinstance(text, (int, float)):
        text = repr(text) if isinstance(text, float) else str(text)
    match = _QUANTITY.match(text.strip()) if text.strip() == text else None
    if match is None:
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    number, suffix = match.group(1), match.group(2)
    if not _NUMBER.match(number):
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    fmt: Format
    if suffix in _DECIMAL_SUFFIXES:
        fmt, exponent, base = "DecimalSI", _DECIMAL_SUFFIXES[suffix], 10
    elif suffix in _BINARY_SUFFIXES:
        fmt, exponent, base = "BinarySI", _BINARY_SUFFIXES[suffix], 2
    else:
        exponent_match = _EXPONENT_SUFFIX.match(suffix)
        if exponent_match is None:
            raise QuantityError("unable to parse quantity's suffix")
        fmt, exponent, base = "DecimalExponent", int(exponent_match.group(1)), 10
    with localcontext() as context:
        context.prec = 100
        try:
            value = Decimal(number) * (Decimal(base) ** exponent)
        except InvalidOperation:
            raise QuantityError(QUANTITY_FORMAT_ERROR) from None
    return Quantity(value, fmt)


def canonical_quantity(text: str | int | float) -> str:
    """`1000m` -> `"1"`, `1024Mi` -> `"1Gi"`, `0.5` -> `"500m"`: the form kube-apiserver stores and returns."""
    return parse_quantity(text).canonical()


def _round_away(value: Decimal, exponent: int) -> Decimal:
    quantum = Decimal(1).scaleb(exponent)
    with localcontext() as context:
        context.prec = 100
        rounding = ROUND_CEILING if value >= 0 else ROUND_FLOOR
        return value.quantize(quantum, rounding=rounding) if value.as_tuple().exponent < exponent else value  # type: ignore[operator]


def _canonical(value: Decimal, fmt: Format) -> str:
    if fmt == "BinarySI" and -1024 < value < 1024:
        fmt = "DecimalSI"
    if fmt == "BinarySI":
        if value != value.to_integral_value():
            fmt = "DecimalSI"
        else:
            integer = int(value)
            power = 0
            while power < 6 and integer != 0 and integer % 1024 == 0:
                integer //= 1024
                power += 1
            return f"{integer}{_BINARY_BY_POWER.get(power, '')}"
    value = _round_away(value, _MIN_EXPONENT)
    if value == 0:
        return "0"
    # Largest exponent (a multiple of 3, at most exa) that leaves an integer mantissa.
    with localcontext() as context:
        context.prec = 100
        exponent = _MIN_EXPONENT
        while exponent + 3 <= _MAX_EXPONENT:
            scaled = value.scaleb(-(exponent + 3))
            if scaled != scaled.to_integral_value():
                break
            exponent += 3
        mantissa = int(value.scaleb(-exponent))
    if fmt == "DecimalExponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_BY_EXPONENT[exponent]}"
