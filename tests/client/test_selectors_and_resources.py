"""Label selector grammar (used by listers to match the cache like the server does) and model resource info."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest
from pydantic import BaseModel

from pyop.client import BUILTIN, APIResource, register_model, resource_for_model
from pyop.client.selectors import LabelSelector, format_label_selector

LABELS = {"app": "web", "tier": "front", "env": ""}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app=db", False),
        ("app!=db", True),
        ("missing!=x", True),
        ("app in (web, db)", True),
        ("app notin (web,db)", False),
        ("missing notin (a)", True),
        ("tier", True),
        ("!tier", False),
        ("!missing", True),
        ("env=", True),
        ("app=web,tier in (front),!missing", True),
        ("app=web, tier=back", False),
    ],
)
def test_label_selector_matching(selector: str, matches: bool) -> None:
    assert LabelSelector.parse(selector).matches(LABELS) is matches


def test_label_selector_from_dict_and_errors() -> None:
    assert format_label_selector({"a": "1", "b": "2"}) == "a=1,b=2"
    assert LabelSelector.parse({"app": "web"}).matches(LABELS)
    with pytest.raises(ValueError):
        LabelSelector.parse("a in (b")
    with pytest.raises(ValueError):
        LabelSelector.parse("=x")


@dataclass(frozen=True)
class Info:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool


class ByResourceInfo(BaseModel):
    resource_info: ClassVar[Info] = Info("g.example", "v2", "Thing", "things", False)


class ByDunders(BaseModel):
    __group__: ClassVar[str] = "g.example"
    __version__: ClassVar[str] = "v1"
    __kind__: ClassVar[str] = "Box"


class Unregistered(BaseModel):
    pass


def test_model_resource_declarations() -> None:
    assert resource_for_model(ByResourceInfo) == APIResource("g.example", "v2", "Thing", "things", False)
    boxes = resource_for_model(ByDunders)
    assert (boxes.kind, boxes.plural, boxes.namespaced) == ("Box", "boxes", True)
    with pytest.raises(TypeError):
        resource_for_model(Unregistered)
    register_model(Unregistered, "apps/v1/Deployment")
    assert resource_for_model(Unregistered) == BUILTIN["apps/v1/Deployment"]
