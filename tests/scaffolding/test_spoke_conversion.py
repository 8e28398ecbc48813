"""The spoke conversion methods that `create webhook --conversion` and `create apiserver` (a kind's next version)
append come from one template and one function; each command's text is kept byte for byte as it was when each had
its own copy (the goldens were rendered from those two templates before they were merged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyop_scaffold.commands.spoke_conversion import AddedBy, add_conversion_methods

GOLDEN = Path(__file__).parent / "golden"
TYPES = '''from pyop import Resource


class Captain(Resource):
    """A Captain."""

    spec: dict = {}
'''


@pytest.mark.parametrize(
    ("added_by", "kind", "hub", "spoke"),
    [("webhook", "Captain", "v1", "v2"), ("apiserver", "Flunder", "v1alpha1", "v1beta1")],
)
def test_each_command_appends_the_methods_it_appended_before(
    added_by: AddedBy, kind: str, hub: str, spoke: str
) -> None:
    text = TYPES.replace("Captain", kind)
    converting = add_conversion_methods(
        text,
        kind=kind,
        spoke_version=spoke,
        hub_version=hub,
        hub_module=f"p.api.{hub}.types",
        package="p",
        added_by=added_by,
        source="types.py",
    )
    golden = (GOLDEN / f"spoke_conversion_{added_by}.py.golden").read_text(encoding="utf-8")
    assert converting.endswith("    spec: dict = {}\n" + golden)
    assert "from typing import Self\n" in converting
    assert f"from p.api.{hub}.types import {kind} as Hub{kind}\n" in converting


def test_a_spoke_that_converts_already_is_left_alone() -> None:
    options = {
        "kind": "Captain",
        "spoke_version": "v2",
        "hub_version": "v1",
        "hub_module": "p.api.v1.types",
        "package": "p",
        "source": "types.py",
    }
    once = add_conversion_methods(TYPES, added_by="webhook", **options)
    assert add_conversion_methods(once, added_by="apiserver", **options) == once
