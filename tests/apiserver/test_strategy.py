"""The typed Strategy: kube's wording of field errors, table columns from a strategy (paths and computed cells),
and hooks left alone costing no model conversion."""

from __future__ import annotations

import json
import ssl
from typing import Any

import aiohttp

from apiserver.helpers import FLUNDERS, call
from apiserver.wardle import Fischer, Flunder
from pyop.api import GroupVersion
from pyop.api import Resource as Resource_
from pyop.apiserver import (
    AggregatedServer,
    APIGroupVersion,
    FieldError,
    RecommendedOptions,
    Resource,
    Strategy,
    TableColumn,
)
from pyop.apiserver.strategy import TypedStrategy
from pyop.testing import TestAPIServer


def test_field_errors_are_worded_as_kubes() -> None:
    assert FieldError.invalid("spec.size", 3, "must be even").cause().message == "Invalid value: 3: must be even"
    assert FieldError.invalid("spec.name", "x", "bad").cause().message == 'Invalid value: "x": bad'
    assert FieldError.required("spec.name").cause().message == "Required value"
    assert FieldError.forbidden("spec.a", "may not be set").cause().reason == "FieldValueForbidden"
    supported = FieldError.not_supported("spec.mode", "fast", ["Slow", "Steady"]).cause()
    assert (supported.reason, supported.message) == (
        "FieldValueNotSupported",
        'Unsupported value: "fast": supported values: "Slow", "Steady"',
    )
    assert FieldError.duplicate("spec.items[1]", "a").cause().field == "spec.items[1]"


class SizedStrategy(Strategy[Flunder]):
    def table_columns(self) -> list[TableColumn] | None:
        return [TableColumn("Size", type="integer", json_path=".spec.size"), TableColumn("Big", type="boolean")]

    def table_cells(self, obj: Flunder) -> list[Any] | None:
        return [obj.spec.size > 10]


async def test_strategy_table_columns_with_computed_cells(core: TestAPIServer, options: RecommendedOptions) -> None:
    group = APIGroupVersion("wardle.example.com", "v1alpha1", [Resource(Flunder, strategy=SizedStrategy())])
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        for name, size in (("small", 2), ("large", 20)):
            status, _ = await call(
                server, "POST", FLUNDERS, token=core.token, body={"metadata": {"name": name}, "spec": {"size": size}}
            )
            assert status == 201
        status, table = await call(
            server,
            "GET",
            FLUNDERS,
            token=core.token,
            headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
        )
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size", "Big"]
    assert [row["cells"] for row in table["rows"]] == [["large", 20, True], ["small", 2, False]]


def test_hooks_left_alone_convert_nothing() -> None:
    adapter = TypedStrategy(Fischer, Strategy(), "Fischer", "wardle.example.com")
    assert not adapter.active
    obj: dict[str, Any] = {"metadata": {"name": "f"}, "spec": {"disallowedFlunders": "not-a-list"}}
    assert adapter.apply(obj, None) == (obj, [])  # not even read as the model


def test_a_kind_is_served_once() -> None:
    import pytest

    from pyop.apiserver import ResourceDefinitionError
    from pyop.apiserver.groups import served_kinds

    group = APIGroupVersion("wardle.example.com", "v1alpha1", [Resource(Flunder), Resource(Flunder)])
    with pytest.raises(ResourceDefinitionError, match=r"flunders.wardle.example.com/v1alpha1 is served twice"):
        served_kinds([group])
    with pytest.raises(ResourceDefinitionError, match=r"not a pyop.api.Resource with group_version"):
        Resource(dict)
    with pytest.raises(
        ResourceDefinitionError, match=r"Flunder is wardle.example.com/v1alpha1, not wardle.example.com/v1"
    ):
        APIGroupVersion("wardle.example.com", "v1", [Resource(Flunder)])


class FlunderBeta(Resource_, group_version=GroupVersion("wardle.example.com", "v1beta1"), kind="Flunder"):
    """Flunder again, in another version."""


def test_two_versions_of_a_kind_need_a_hub() -> None:
    """Versions of one kind share their storage: one model must be the hub they convert through (test_versions)."""
    import pytest

    from pyop.apiserver import ResourceDefinitionError
    from pyop.apiserver.groups import served_kinds

    groups = [
        APIGroupVersion("wardle.example.com", "v1alpha1", [Resource(Flunder)]),
        APIGroupVersion("wardle.example.com", "v1beta1", [Resource(FlunderBeta)]),
    ]
    with pytest.raises(ResourceDefinitionError, match=r"served in v1alpha1 and v1beta1: exactly one version's model"):
        served_kinds(groups)


async def test_a_watch_of_tables_has_the_computed_cells(core: TestAPIServer, options: RecommendedOptions) -> None:
    group = APIGroupVersion("wardle.example.com", "v1alpha1", [Resource(Flunder, strategy=SizedStrategy())])
    async with AggregatedServer.for_testing([group], core, options=options, register=False) as server:
        await call(server, "POST", FLUNDERS, token=core.token, body={"metadata": {"name": "w"}, "spec": {"size": 30}})
        headers = {"Authorization": f"Bearer {core.token}", "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
        context = ssl.create_default_context(cafile=str(server.ca_file))
        async with (
            aiohttp.ClientSession() as session,
            session.get(server.url + FLUNDERS + "?watch=1&timeoutSeconds=2", headers=headers, ssl=context) as response,
        ):
            event = json.loads(await response.content.readline())
    assert [c["name"] for c in event["object"]["columnDefinitions"]] == ["Name", "Size", "Big"]
    assert event["object"]["rows"][0]["cells"] == ["w", 30, True]
