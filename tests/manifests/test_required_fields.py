"""Required fields in a spec (the tutorials' first step: Memcached `size`, CronJob `schedule`).

A required field is listed in `required:`; a default factory that cannot build a valid object is never called
and gives no `default` (controller-gen writes none for a nested struct either); one that can and has defaults
of its own still gives `default: {}`. A factory that raises for another reason, or is not callable, is an error
at the field's line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from manifests_helpers import fails, generate, project, spec_of
from pydantic import BaseModel, Field, model_validator

from pyop.api import Int32, KubeModel
from pyop_scaffold.manifests.builtin import builtin_schema
from pyop_scaffold.manifests.crd.schema import SchemaBuilder
from pyop_scaffold.manifests.errors import MarkerError

CALLS: list[str] = []


class Sized(KubeModel):
    """A model with a required field; records every attempt to build it (before validation fails)."""

    size: Int32
    port: Int32 = 11211

    @model_validator(mode="before")
    @classmethod
    def _record(cls, data: Any) -> Any:
        CALLS.append(cls.__name__)
        return data


class HoldsSized(KubeModel):
    """No required field of its own, but its factory-built field cannot be built."""

    sized: Sized = Field(default_factory=Sized)
    label: str = "x"


class Tuning(KubeModel):
    level: Int32 = 2


class Refusing(KubeModel):
    """Its defaults fail its own validator: no valid object to default to."""

    level: Int32 = 0

    @model_validator(mode="after")
    def _positive(self) -> Refusing:
        if self.level < 1:
            raise ValueError("level must be positive")
        return self


class Raising(KubeModel):
    level: Int32 = 1

    def model_post_init(self, context: Any) -> None:
        raise ZeroDivisionError("no level")


class FillsItselfIn(KubeModel):
    """A required field its own __init__ fills in: the factory is tried, and it works."""

    size: Int32

    def __init__(self, **data: Any) -> None:
        data.setdefault("size", 3)
        super().__init__(**data)


class Spec(KubeModel):
    sized: Sized = Field(default_factory=Sized)
    holds: HoldsSized = Field(default_factory=HoldsSized)
    tuning: Tuning = Field(default_factory=Tuning)
    refusing: Refusing = Field(default_factory=Refusing)
    fills: FillsItselfIn = Field(default_factory=FillsItselfIn)


def _schema(cls: type[BaseModel]) -> dict[str, Any]:
    return SchemaBuilder(builtin_schema).model_schema(cls)


def test_a_factory_that_cannot_build_gives_no_default_and_is_never_called() -> None:
    CALLS.clear()
    props = _schema(Spec)["properties"]
    assert CALLS == []
    assert "default" not in props["sized"]
    assert props["sized"]["required"] == ["size"]
    assert props["sized"]["properties"]["port"]["default"] == 11211
    # One level further down: HoldsSized has no required field, but building it builds a Sized.
    assert "default" not in props["holds"]
    assert "default" not in props["holds"]["properties"]["sized"]
    assert CALLS == []


def test_a_factory_with_defaults_to_apply_still_gives_an_empty_object() -> None:
    props = _schema(Spec)["properties"]
    assert props["tuning"]["default"] == {}
    assert props["tuning"]["properties"]["level"] == {"type": "integer", "format": "int32", "default": 2}
    # Its own __init__ fills `size` in, but the schema defaults nothing and requires `size`: a `{}` default would
    # bring nothing and fail the API server's check of defaults against `required`.
    assert "default" not in props["fills"]


def test_defaults_a_validator_refuses_give_no_default() -> None:
    assert "default" not in _schema(Spec)["properties"]["refusing"]


class RaisingSpec(KubeModel):
    raising: Raising = Field(default_factory=Raising)


class NotCallable(KubeModel):
    tags: list[str] = Field(default_factory=1)  # type: ignore[arg-type]


def test_a_factory_that_raises_is_an_error_at_the_field() -> None:
    with pytest.raises(MarkerError) as caught:
        _schema(RaisingSpec)
    line = Path(__file__).read_text().splitlines().index("    raising: Raising = Field(default_factory=Raising)") + 1
    assert str(caught.value) == (
        f"{__file__}:{line}: field RaisingSpec.raising: its default factory Raising() raised ZeroDivisionError: "
        "no level; it must build a valid Raising from defaults alone (pyop --debug or PYOP_DEBUG=1 shows the "
        "traceback)"
    )
    assert isinstance(caught.value.__cause__, ZeroDivisionError)  # --debug prints this traceback


def test_a_factory_that_is_not_callable_is_an_error() -> None:
    with pytest.raises(MarkerError, match=r"field NotCallable.tags: default_factory=1 is not callable"):
        _schema(NotCallable)


MEMCACHED = {
    "v1alpha1/memcached_types.py": """
        class MemcachedSpec(KubeModel):
            # size is the number of memcached pods.
            # +kubebuilder:validation:Minimum=1
            size: Int32

            container_port: Int32 = 11211


        # +kubebuilder:object:root=true
        class Memcached(Resource, group_version=GROUP_VERSION):
            # +required
            spec: MemcachedSpec{spec_default}
        """,
}


def _memcached(root: Path, spec_default: str) -> Path:
    modules = {name: body.replace("{spec_default}", spec_default) for name, body in MEMCACHED.items()}
    return project(root, modules)


@pytest.mark.parametrize("spec_default", ["", " = Field(default_factory=MemcachedSpec)"], ids=["plain", "factory"])
def test_make_manifests_with_a_required_spec_field(tmp_path: Path, spec_default: str) -> None:
    """The scaffold's root as it is now (`spec: MemcachedSpec`) and as it was (with a default factory): both
    generate, with `size` required and no default on `spec`, which is required."""
    root = _memcached(tmp_path / "op", spec_default)
    crd = generate(root)["fleet.example.com_memcacheds.yaml"]
    spec = spec_of(crd)
    assert spec["required"] == ["size"]
    assert "default" not in spec
    assert spec["properties"]["containerPort"]["default"] == 11211
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema["required"] == ["spec"]


def test_both_roots_give_the_same_crd(tmp_path: Path) -> None:
    plain = _memcached(tmp_path / "plain", "")
    factory = _memcached(tmp_path / "factory", " = Field(default_factory=MemcachedSpec)")
    generate(plain)
    generate(factory)
    name = "config/crd/bases/fleet.example.com_memcacheds.yaml"
    assert (plain / name).read_bytes() == (factory / name).read_bytes()


def _sample(root: Path, spec: str) -> None:
    samples = root / "config" / "samples"
    samples.mkdir(parents=True, exist_ok=True)
    (samples / "fleet_v1alpha1_memcached.yaml").write_text(
        f"apiVersion: fleet.example.com/v1alpha1\nkind: Memcached\nmetadata:\n  name: memcached-sample\nspec:\n{spec}"
    )


def test_check_accepts_a_sample_without_defaults_and_refuses_one_without_the_required_field(tmp_path: Path) -> None:
    root = _memcached(tmp_path / "op", "")
    _sample(root, "  size: 1\n")
    generate(root, "--check")
    _sample(root, "  containerPort: 11211\n")
    stderr = fails(root, "--check")
    assert stderr == "Error: config/samples/fleet_v1alpha1_memcached.yaml:5: spec.size: Required value\n"
