"""Field selectors with apimachinery's escaping (fields.ParseSelector, splitTerms, splitTerm, UnescapeValue), issue 12.

`\\,`, `\\=` and `\\\\` stand for `,`, `=` and `\\` in a value; `==` is `=`; an unescaped `,` splits terms and an
unescaped `=` in a value is refused (`invalid field selector: unescaped character in value: 61`: Go prints the rune
with %v, as a number), as is any other escape (`invalid field selector: invalid escape sequence: \\x`) and a trailing
backslash. pyop's client escapes a dict's values as fields.EscapeValue does. Events are used because their `reason`
is free text and a supported field label.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from pyop.client import DynamicClient, Transport
from pyop.testing import TestAPIServer
from testing_server.helpers import Api, official_client

EVENTS = "/api/v1/namespaces/default/events"
REASONS = {"comma": "Back,Off", "equals": "a=b", "backslash": "C:\\dir", "plain": "Started"}


async def make_events(api: Api) -> None:
    for name, reason in REASONS.items():
        body = {
            "metadata": {"name": name},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": reason,
            "type": "Normal",
        }
        await api.create_ok(EVENTS, body)


async def names(api: Api, selector: str) -> list[str]:
    code, body = await api.get(EVENTS, fieldSelector=selector)
    assert code == 200, body
    return sorted(item["metadata"]["name"] for item in body["items"])


async def test_escaped_values_match_literally(api: Api) -> None:
    await make_events(api)
    assert await names(api, "reason=Back\\,Off") == ["comma"]
    assert await names(api, "reason==a\\=b") == ["equals"]
    assert await names(api, "reason=C:\\\\dir") == ["backslash"]
    assert await names(api, "reason!=Back\\,Off,reason!=Started") == ["backslash", "equals"]
    assert await names(api, "type=Normal,,reason=Started") == ["plain"]  # empty terms are skipped


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("reason=a=b", "invalid field selector: unescaped character in value: 61"),
        ("reason!==x", "invalid field selector: unescaped character in value: 61"),
        ("reason=a\\x", "invalid field selector: invalid escape sequence: \\x"),
        ("reason=a\\", "invalid field selector: invalid escape sequence: \\"),
        ("reason", "invalid selector: 'reason'; can't understand 'reason'"),
        ("reason = Started", "field label not supported: reason "),  # nothing is trimmed
    ],
)
async def test_bad_selectors_are_400_in_apimachinerys_words(api: Api, selector: str, message: str) -> None:
    code, body = await api.get(EVENTS, fieldSelector=selector)
    assert code == 400 and body["reason"] == "BadRequest"
    assert message in body["message"]


async def test_pyop_client_escapes_dict_values(server: TestAPIServer, api: Api) -> None:
    await make_events(api)
    async with Transport(server.client_config()) as transport:
        client = DynamicClient(transport)
        events = await client.resource("v1", "Event")
        listed = await client.list(events, "default", field_selector={"reason": "Back,Off"})
        assert [item["metadata"]["name"] for item in listed.items] == ["comma"]
        listed = await client.list(events, "default", field_selector={"reason": "C:\\dir"})
        assert [item["metadata"]["name"] for item in listed.items] == ["backslash"]


async def test_official_client_and_kubectl(server: TestAPIServer, api: Api, tmp_path: Path) -> None:
    await make_events(api)
    kubernetes = pytest.importorskip("kubernetes")
    core = kubernetes.client.CoreV1Api(official_client(server))

    def run() -> Any:
        return core.list_namespaced_event("default", field_selector="reason=a\\=b")

    listed = await asyncio.to_thread(run)
    assert [item.metadata.name for item in listed.items] == ["equals"]
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl is not on PATH")
    from testing_server.kubectl.helpers import Kubectl

    kubectl = Kubectl(binary, server, tmp_path)
    shown = await kubectl("get", "events", "--field-selector", "reason=Back\\,Off", "-o", "name")
    assert shown.stdout.split() == ["event/comma"]
    refused = await kubectl("get", "events", "--field-selector", "reason=a=b", check=False)
    assert refused.returncode == 1 and "unescaped character in value: 61" in refused.stderr
