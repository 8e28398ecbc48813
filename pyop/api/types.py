"""Sized integers for CRD models: `Int32` and `Int64`, Go's `int32`/`int64` as controller-gen writes them.

    class ScaleSpec(KubeModel):
        replicas: Int32 = 1          # schema: {type: integer, format: int32}
        max_surge_bytes: Int64 | None = None

A plain `int` becomes `{type: integer}`; the aliases add the OpenAPI `format` controller-gen gives Go's sized
integers, so clients generated from the CRD (and `kubectl explain`) see the width, and they refuse out-of-range
values when a model is built, as Go's JSON decoder would. The API server itself does not check the range.

This module is imported by every operator at start-up: keep it to the standard library and pydantic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Final, TypeAlias

from pydantic import AfterValidator


@dataclass(frozen=True)
class SchemaFormat:
    """`Annotated` metadata naming the OpenAPI `format` the CRD generator writes for the annotated value.

    `Annotated[int, SchemaFormat("int32")]` is what `Int32` is; use it directly for other formats
    (`Annotated[str, SchemaFormat("uuid")]`). A `+kubebuilder:validation:Format` marker that says otherwise
    on the same field is an error, not an override.
    """

    format: str


INT32_RANGE: Final = (-(2**31), 2**31 - 1)
INT64_RANGE: Final = (-(2**63), 2**63 - 1)


def _in_range(name: str, bounds: tuple[int, int]) -> Callable[[int], int]:
    low, high = bounds

    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"{value} does not fit in {name} ({low} to {high})")
        return value

    return check


Int32: TypeAlias = Annotated[int, SchemaFormat("int32"), AfterValidator(_in_range("int32", INT32_RANGE))]
"""Go's `int32`: `{type: integer, format: int32}` in the CRD; values outside 32 bits are refused."""

Int64: TypeAlias = Annotated[int, SchemaFormat("int64"), AfterValidator(_in_range("int64", INT64_RANGE))]
"""Go's `int64`: `{type: integer, format: int64}` in the CRD; values outside 64 bits are refused."""

__all__ = ["INT32_RANGE", "INT64_RANGE", "Int32", "Int64", "SchemaFormat"]
