"""The items of a typed list answer, each validated into its model when it is first read.

Validating a list answer item by item cost more than everything else the list did (for a small custom resource as
the API server stores it, with managedFields: ~13 us an item against ~9 us for the HTTP request and JSON decoding),
which made a typed list dearer per item than the official client's plain dicts. A controller often reads a few
items of a list (the first match, the ones a filter keeps), or only its length and resourceVersion; then it pays
for those. `LazyModels` is a `list` of the models: reading an item (by index, slice or iteration) validates it once
and keeps the model, so the second read is free and the same instance; any other list operation (comparison,
`in`, sort, copy, repr, pickling) first validates them all, so it behaves exactly as a list of models. A malformed
item raises pydantic's ValidationError where it is read rather than in the list call.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any, SupportsIndex, TypeVar, overload

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


class LazyModels(list[M]):
    """A list of `model` instances made from `raw` dicts on first read (see the module doc)."""

    __slots__ = ("_validate", "_pending")

    def __init__(self, model: type[M], raw: list[dict[str, Any]]) -> None:
        super().__init__(raw)  # type: ignore[arg-type]  # dicts until read, then the models
        self._validate: Callable[[Any], M] = model.model_validate
        self._pending = len(raw)

    def _item(self, index: int) -> M:
        value: Any = list.__getitem__(self, index)
        if self._pending and type(value) is dict:
            value = self._validate(value)
            list.__setitem__(self, index, value)
            self._pending -= 1
        result: M = value
        return result

    def materialize(self) -> LazyModels[M]:
        """Validate every item now (what any operation but reading items does first)."""
        if self._pending:
            for index in range(len(self)):
                self._item(index)
        return self

    @overload
    def __getitem__(self, index: SupportsIndex) -> M: ...

    @overload
    def __getitem__(self, index: slice) -> list[M]: ...

    def __getitem__(self, index: SupportsIndex | slice) -> M | list[M]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(len(self)))]
        position = index.__index__()
        return self._item(position + len(self) if position < 0 else position)

    def __iter__(self) -> Iterator[M]:
        if not self._pending:
            return list.__iter__(self)
        return (self._item(index) for index in range(len(self)))

    def __reversed__(self) -> Iterator[M]:
        return list.__reversed__(self.materialize())

    def __contains__(self, value: object) -> bool:
        return list.__contains__(self.materialize(), value)

    def __eq__(self, other: object) -> bool:
        return list.__eq__(self.materialize(), _plain(other))

    def __ne__(self, other: object) -> bool:
        return list.__ne__(self.materialize(), _plain(other))

    __hash__ = None  # a list

    def __repr__(self) -> str:
        return list.__repr__(self.materialize())

    def __add__(self, other: list[M]) -> list[M]:  # type: ignore[override]
        return list(self.materialize()) + list(other)

    def __mul__(self, count: SupportsIndex) -> list[M]:
        return list(self.materialize()) * count

    def copy(self) -> list[M]:
        return list(self.materialize())

    def index(self, value: M, start: SupportsIndex = 0, stop: SupportsIndex = 2**62) -> int:
        return list.index(self.materialize(), value, start, stop)

    def count(self, value: M) -> int:
        return list.count(self.materialize(), value)

    def sort(self, *args: Any, **kwargs: Any) -> None:
        list.sort(self.materialize(), *args, **kwargs)

    def pop(self, index: SupportsIndex = -1) -> M:
        return list.pop(self.materialize(), index)

    def remove(self, value: M) -> None:
        list.remove(self.materialize(), value)

    def __copy__(self) -> list[M]:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> list[M]:
        return [copy.deepcopy(item, memo) for item in self]

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return (list, (list(self),))


def _plain(other: object) -> object:
    return other.materialize() if isinstance(other, LazyModels) else other
