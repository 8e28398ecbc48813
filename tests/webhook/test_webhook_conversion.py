"""ConversionReviews POSTed to `/convert`: hub to spoke, spoke to hub, spoke to spoke through the hub, and
failures reported in the review's result."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from webhook_helpers import GROUP, Gadget, GadgetV1beta1, GadgetV2, post, webhook_manager

from pyop.api import GroupVersion, Resource
from pyop.manager import Manager
from pyop.testing import TestAPIServer
from pyop.webhook import ConversionWebhook


class Converter:
    def __init__(self, manager: Manager, cert_dir: Path) -> None:
        self.manager = manager
        self.cert_dir = cert_dir

    async def convert(self, desired: str, *objects: dict[str, Any]) -> dict[str, Any]:
        review: dict[str, Any] = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": str(uuid.uuid4()), "desiredAPIVersion": f"{GROUP}/{desired}", "objects": list(objects)},
        }
        status, answer = await post(self.manager, "/convert", review, self.cert_dir)
        assert status == 200
        assert answer["kind"] == "ConversionReview" and answer["apiVersion"] == "apiextensions.k8s.io/v1"
        assert answer["response"]["uid"] == review["request"]["uid"]
        response: dict[str, Any] = answer["response"]
        return response


def stored(version: str, spec: dict[str, Any], name: str = "g") -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "Gadget",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": "7", "labels": {"app": "x"}},
        "spec": spec,
    }


@pytest_asyncio.fixture
async def converter(server: TestAPIServer, cert_dir: Path) -> AsyncIterator[Converter]:
    manager = webhook_manager(server, cert_dir)
    manager.webhook_for(Gadget).with_conversion(hub=Gadget, spokes=[GadgetV2, GadgetV1beta1]).complete()
    async with manager:
        yield Converter(manager, cert_dir)


async def test_hub_to_spoke_and_back(converter: Converter) -> None:
    response = await converter.convert("v2", stored("v1", {"size": 3, "image": "a:1"}))
    assert response["result"] == {"status": "Success"}
    [spoke] = response["convertedObjects"]
    assert spoke == stored("v2", {"replicas": 3, "containerImage": "a:1"})

    back = await converter.convert("v1", spoke)
    assert back["convertedObjects"] == [stored("v1", {"size": 3, "image": "a:1"})]


async def test_spoke_to_spoke_goes_through_the_hub_and_objects_keep_their_order(converter: Converter) -> None:
    response = await converter.convert(
        "v1beta1",
        stored("v2", {"replicas": 4}, name="a"),
        stored("v1", {"size": 5}, name="b"),
        stored("v1beta1", {"scale": "6"}, name="c"),  # already in the desired version: returned as it came
    )
    assert response["convertedObjects"] == [
        stored("v1beta1", {"scale": "4"}, name="a"),
        stored("v1beta1", {"scale": "5"}, name="b"),
        stored("v1beta1", {"scale": "6"}, name="c"),
    ]


@pytest.mark.parametrize(
    ("desired", "obj", "message"),
    [
        ("v2", stored("v1", {"size": -1}, name="neg"), "size -1 has no v2 form"),
        ("v1", stored("v1beta1", {"scale": "many"}, name="text"), "invalid literal for int()"),
        ("v3", stored("v1", {"size": 1}), "no model for version 'v3'"),
        ("v1", {**stored("v2", {}), "kind": "Widget"}, "no conversion is registered for Widget.hooks.pyop.dev"),
    ],
)
async def test_a_failed_conversion_fails_the_review_with_the_reason(
    converter: Converter, desired: str, obj: dict[str, Any], message: str
) -> None:
    response = await converter.convert(desired, stored("v1", {"size": 1}, name="fine"), obj)
    assert response["result"]["status"] == "Failure"
    assert message in response["result"]["message"]
    assert response["convertedObjects"] == []


async def test_a_body_that_is_not_a_conversion_review_is_a_400(converter: Converter) -> None:
    status, _ = await post(converter.manager, "/convert", b"[1, 2", converter.cert_dir)
    assert status == 400
    status, _ = await post(converter.manager, "/convert", {"kind": "ConversionReview"}, converter.cert_dir)
    assert status == 400
    counted = converter.manager.metrics.value(
        "controller_runtime_webhook_requests_total", {"webhook": "/convert", "code": "400"}
    )
    assert counted == 2


class GadgetV3(Resource, group_version=GroupVersion(GROUP, "v3"), kind="Gadget"):
    """A version without conversion functions."""


def test_registration_refuses_an_unmarked_hub_and_a_spoke_that_cannot_convert() -> None:
    conversion = ConversionWebhook()
    with pytest.raises(ValueError, match="not marked as a hub"):
        conversion.add(GadgetV2, [Gadget])
    with pytest.raises(ValueError, match="not Convertible"):
        conversion.add(Gadget, [GadgetV3])
    conversion.add(Gadget, [GadgetV2])
    with pytest.raises(ValueError, match="already registered"):
        conversion.add(Gadget, [GadgetV1beta1])
