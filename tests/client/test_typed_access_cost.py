"""What keeps typed access cheap: list items whose fields are validated when read, and status writes that skip the
answer."""

from __future__ import annotations

from client_helpers import GROUP, Widget, widget
from pydantic import BaseModel

from pyop.api import GroupVersion, KubeModel, Resource
from pyop.api.model import PENDING
from pyop.client import Client


class KubeWidgetSpec(KubeModel):
    replicas: int | None = None


class KubeWidget(Resource, group_version=GroupVersion(GROUP, "v1"), kind="Widget", plural="widgets"):
    spec: KubeWidgetSpec = KubeWidgetSpec()


def unread(obj: BaseModel) -> bool:
    return PENDING in BaseModel.__dict__["__dict__"].__get__(obj)


async def test_typed_list_items_are_models(client: Client) -> None:
    await client.create(widget("a", replicas=1))
    await client.create(widget("b", replicas=2))
    page = await client.list(Widget, "default")
    assert [w.spec.replicas for w in page.items] == [1, 2]
    assert all(isinstance(w, Widget) for w in page.items)


async def test_typed_reads_validate_the_fields_a_caller_reads(client: Client) -> None:
    await client.create(widget("a", replicas=1))
    await client.create(widget("b", replicas=2))
    page = await client.list(KubeWidget, "default")
    assert all(unread(item) for item in page.items)
    assert [item.spec.replicas for item in page.items] == [1, 2]
    assert all(unread(item.metadata) for item in page.items)  # read, its own fields not yet
    again = await client.list(KubeWidget, "default")
    assert page.items == again.items  # == validates what was not read
    one = await client.get(KubeWidget, "a", "default")
    assert unread(one) and one.metadata.uid == page.items[0].metadata.uid


async def test_status_writes_can_skip_validating_the_answer(client: Client) -> None:
    created = await client.create(widget("a", replicas=1))
    assert await client.patch_status(Widget, "a", {"status": {"phase": "Ready"}}, "default", validate=False) is None
    assert (await client.get(Widget, "a", "default")).status.phase == "Ready"  # type: ignore[union-attr]
    current = await client.get(Widget, "a", "default")
    current.status.phase = "Done"  # type: ignore[union-attr]
    assert await client.update_status(current, validate=False) is None
    assert (await client.get(Widget, "a", "default")).status.phase == "Done"  # type: ignore[union-attr]
    assert created.metadata.name == "a"
