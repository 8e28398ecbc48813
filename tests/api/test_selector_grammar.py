"""One label-selector grammar on both sides of the wire: pyop.client's LabelSelector (the informer cache's listers)
and the test API server's list filter select the same objects for every clause of apimachinery's labels.Parse
(equality, set-based, existence, `!key`, `>`/`<` with integers) and refuse the same bad selectors (ValueError in
the client, 400 BadRequest from the server). The expected selections are read off kube's documented grammar."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from pyop.api.selectors import SelectorError, parse_field_selector, path_getter
from pyop.client.selectors import LabelSelector
from pyop.testing import TestAPIServer

NAMESPACE = "selectors"
OBJECTS: dict[str, dict[str, str]] = {
    "a": {"tier": "1", "app": "web"},
    "b": {"tier": "3", "app": "db"},
    "c": {"tier": "x"},
    "d": {},
    "e": {"app": "", "tier": "10"},
}
SELECTIONS = [
    ("tier>1", {"b", "e"}),  # "greater than 1", never "a label named `tier>1` exists"; `x` is no integer
    ("tier<3", {"a"}),
    ("tier>0,tier<10", {"a", "b"}),
    ("app", {"a", "b", "e"}),
    ("!app", {"c", "d"}),
    ("!app,tier", {"c"}),
    ("app in (web,db)", {"a", "b"}),
    ("app in (web, db)", {"a", "b"}),
    ("app notin (web)", {"b", "c", "d", "e"}),
    ("app in ()", {"e"}),  # the set of the empty value
    ("app=", {"e"}),
    ("app=web", {"a"}),
    ("app==db", {"b"}),
    ("app!=web", {"b", "c", "d", "e"}),
    ("  app = web  ", {"a"}),
    ("tier>1,app", {"b", "e"}),
    ("in", set()),  # `in` is a key where a key is expected
    ("", {"a", "b", "c", "d", "e"}),
]
BAD = [
    "tier>x",
    "tier>1.5",
    "tier>",
    "tier>-1",  # the value of > and < is an integer and a label value too (no sign)
    "a in (b",
    "a in b",
    "=x",
    "a b",
    "a=b c",
    "a=b=c",
    "a!!b",
    "a,",
    ",a",
    "a=(b)",
    "k/=v",
    "-bad=1",
    "a=" + "v" * 64,
    "a=b;c",
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[TestAPIServer]:
    async with TestAPIServer(root_ca_config_maps=False) as server:  # only the ConfigMaps made here
        from pyop.apiserver.registry.operations import WriteOptions

        namespaces = server.resources.lookup("", "v1", "namespaces")
        configmaps = server.resources.lookup("", "v1", "configmaps")
        server.operations.create(namespaces, "", {"metadata": {"name": NAMESPACE}}, WriteOptions())
        for name, labels in OBJECTS.items():
            server.operations.create(
                configmaps, NAMESPACE, {"metadata": {"name": name, "labels": labels}}, WriteOptions()
            )
        yield server


async def _server_list(server: TestAPIServer, selector: str) -> tuple[int, dict]:
    async with (
        aiohttp.ClientSession(headers={"Authorization": f"Bearer {server.token}"}) as session,
        session.get(
            f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps",
            params={"labelSelector": selector},
            ssl=server.ssl_context(),
        ) as response,
    ):
        return response.status, await response.json()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("selector", "expected"), SELECTIONS)
async def test_client_and_server_select_alike(server: TestAPIServer, selector: str, expected: set[str]) -> None:
    parsed = LabelSelector.parse(selector)
    assert {name for name, labels in OBJECTS.items() if parsed.matches(labels)} == expected
    status, body = await _server_list(server, selector)
    assert status == 200, body
    assert {item["metadata"]["name"] for item in body["items"]} == expected


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("selector", BAD)
async def test_client_and_server_refuse_alike(server: TestAPIServer, selector: str) -> None:
    with pytest.raises(ValueError) as refused:
        LabelSelector.parse(selector)
    assert isinstance(refused.value, SelectorError)
    status, body = await _server_list(server, selector)
    assert status == 400 and body["reason"] == "BadRequest"
    assert body["message"] == refused.value.message  # one parser: the same words on both sides


def test_gt_lt_error_names_the_value() -> None:
    with pytest.raises(SelectorError) as refused:
        LabelSelector.parse("tier>high")
    assert '"high"' in refused.value.message and "must be an integer" in refused.value.message


def test_field_selectors() -> None:
    fields = {"metadata.name": path_getter("metadata.name"), "status.phase": path_getter("status.phase")}
    pod = {"metadata": {"name": "p"}, "status": {"phase": "Running"}}
    for text, matches in [
        ("metadata.name=p", True),
        ("metadata.name==p", True),
        ("status.phase!=Running", False),
        ("metadata.name=p,status.phase=Pending", False),
    ]:
        requirements = parse_field_selector(text, fields)
        assert all(requirement.matches(pod) for requirement in requirements) is matches, text
    for bad in ("metadata.name", "spec.nodeName=x"):
        with pytest.raises(SelectorError):
            parse_field_selector(bad, fields)
