"""pyop.api models: wire names, type meta filled in, resource info from class keywords, bytes as base64."""

from __future__ import annotations

from pydantic import Field

from pyop.api import GroupVersion, KubeModel, Resource, ResourceList

GV = GroupVersion("crew.example.com", "v1")


class ShipSpec(KubeModel):
    max_speed: int | None = None
    secret: bytes | None = None


class Ship(Resource, group_version=GV):
    spec: ShipSpec = Field(default_factory=ShipSpec)


class Person(Resource, group_version=GV, kind="Person", namespaced=False):
    pass


class Cargo(Resource, group_version=GroupVersion("", "v1"), plural="cargoes"):
    pass


class ShipList(ResourceList[Ship]):
    pass


def test_type_meta_is_filled_and_fields_are_camel_case_on_the_wire() -> None:
    ship = Ship(metadata={"name": "a"}, spec=ShipSpec(max_speed=3))
    assert ship.to_dict() == {
        "apiVersion": "crew.example.com/v1",
        "kind": "Ship",
        "metadata": {"name": "a"},
        "spec": {"maxSpeed": 3},
    }
    assert Ship.model_validate({"metadata": {"name": "b"}, "spec": {"maxSpeed": 9}}).spec.max_speed == 9


def test_resource_info_from_class_keywords() -> None:
    assert (Ship.resource_info.plural, Ship.resource_info.namespaced) == ("ships", True)
    assert (Person.resource_info.plural, Person.resource_info.namespaced) == ("people", False)
    assert Cargo.resource_info.api_version == "v1" and Cargo.resource_info.plural == "cargoes"


def test_unknown_fields_from_the_server_are_ignored_but_metadata_keeps_them() -> None:
    ship = Ship.model_validate(
        {"metadata": {"name": "a", "selfLink": "/x"}, "spec": {"maxSpeed": 1, "fromTheFuture": True}}
    )
    assert ship.spec.max_speed == 1
    assert ship.to_dict()["metadata"]["selfLink"] == "/x"


def test_bytes_are_base64_in_json_as_format_byte_says() -> None:
    ship = Ship(spec=ShipSpec(secret=b"hi"))
    assert ship.to_dict()["spec"]["secret"] == "aGk="
    assert Ship.model_validate_json(ship.model_dump_json(by_alias=True)).spec.secret == b"hi"


def test_lists_hold_typed_items() -> None:
    listed = ShipList.model_validate({"metadata": {"resourceVersion": "7", "continue": "t"}, "items": [{"spec": {}}]})
    assert listed.metadata.resource_version == "7" and listed.metadata.continue_ == "t"
    assert isinstance(listed.items[0], Ship)


def test_kubernetes_scalar_types_come_with_the_model_bases() -> None:
    """docs/getting-started.md imports Int32, Quantity and IntOrString "with the others" from pyop.api."""
    import pyop.api
    from pyop.api import builtin_types

    for name in ("Quantity", "IntOrString", "Time", "MicroTime", "Duration"):
        assert getattr(pyop.api, name) is getattr(builtin_types, name) and name in pyop.api.__all__
