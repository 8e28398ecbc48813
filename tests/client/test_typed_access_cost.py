"""What keeps typed access cheap: list items validated when first read, and status writes that skip the answer."""

from __future__ import annotations

import copy
import pickle

import pytest
from client_helpers import Widget, widget
from pydantic import BaseModel, ValidationError

from pyop.client import Client
from pyop.client.lazy import LazyModels


class Item(BaseModel):
    n: int


def test_items_are_validated_once_when_read_and_behave_as_a_list_of_models() -> None:
    items = LazyModels(Item, [{"n": 0}, {"n": 1}, {"n": 2}])
    assert len(items) == 3 and isinstance(items, list)
    first = items[0]
    assert first == Item(n=0) and items[0] is first  # read once, then the same instance
    assert items[-1] == Item(n=2) and items[1:] == [Item(n=1), Item(n=2)]
    assert [item.n for item in items] == [0, 1, 2]
    assert Item(n=1) in LazyModels(Item, [{"n": 1}])
    assert LazyModels(Item, [{"n": 1}]) == [Item(n=1)]
    assert list(reversed(LazyModels(Item, [{"n": 1}, {"n": 2}]))) == [Item(n=2), Item(n=1)]
    unsorted = LazyModels(Item, [{"n": 2}, {"n": 1}])
    unsorted.sort(key=lambda item: item.n)
    assert unsorted == [Item(n=1), Item(n=2)]
    assert repr(LazyModels(Item, [{"n": 1}])) == "[Item(n=1)]"
    assert pickle.loads(pickle.dumps(LazyModels(Item, [{"n": 1}]))) == [Item(n=1)]
    assert copy.deepcopy(LazyModels(Item, [{"n": 1}])) == [Item(n=1)]


def test_a_malformed_item_fails_where_it_is_read() -> None:
    items = LazyModels(Item, [{"n": 1}, {"n": "not a number"}])
    assert items[0].n == 1
    with pytest.raises(ValidationError):
        items[1]


async def test_typed_list_items_are_models(client: Client) -> None:
    await client.create(widget("a", replicas=1))
    await client.create(widget("b", replicas=2))
    page = await client.list(Widget, "default")
    assert [w.spec.replicas for w in page.items] == [1, 2]
    assert all(isinstance(w, Widget) for w in page.items)


async def test_status_writes_can_skip_validating_the_answer(client: Client) -> None:
    created = await client.create(widget("a", replicas=1))
    assert await client.patch_status(Widget, "a", {"status": {"phase": "Ready"}}, "default", validate=False) is None
    assert (await client.get(Widget, "a", "default")).status.phase == "Ready"  # type: ignore[union-attr]
    current = await client.get(Widget, "a", "default")
    current.status.phase = "Done"  # type: ignore[union-attr]
    assert await client.update_status(current, validate=False) is None
    assert (await client.get(Widget, "a", "default")).status.phase == "Done"  # type: ignore[union-attr]
    assert created.metadata.name == "a"
