"""Whether a nested model has defaults to apply is read from its field defaults without building it, and
agrees with instantiating and dumping the model wherever it answers."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

from pyop_scaffold.manifests.crd.schema import _defaults_dump_non_empty


class AllNone(BaseModel):
    a: int | None = None
    b: str | None = Field(default=None)


class OneValue(BaseModel):
    a: int | None = None
    b: str = "x"


class EmptyCollections(BaseModel):
    tags: list[str] = []
    labels: dict[str, str] = Field(default_factory=dict)


class Nested(BaseModel):
    inner: AllNone = Field(default_factory=AllNone)


class FactoryReturningNone(BaseModel):
    a: int | None = Field(default_factory=lambda: None)


class NoFields(BaseModel):
    pass


class Excluded(BaseModel):
    a: int = Field(default=1, exclude=True)


class Validated(BaseModel):
    a: int | None = None

    @field_validator("a")
    @classmethod
    def keep(cls, value: int | None) -> int | None:
        return value


class ModelValidated(BaseModel):
    a: int | None = None

    @model_validator(mode="after")
    def fill(self) -> ModelValidated:
        self.a = 3
        return self


class Computed(BaseModel):
    a: int | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def double(self) -> int:
        return 2


class ValidateDefaults(BaseModel):
    model_config = ConfigDict(validate_default=True)
    a: int | None = None


class Required(BaseModel):
    a: int


class OwnInit(BaseModel):
    a: int | None = None

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        self.a = 1


ANSWERED = [AllNone, OneValue, EmptyCollections, Nested, FactoryReturningNone, NoFields]
DECLINED = [Excluded, Validated, ModelValidated, Computed, ValidateDefaults, Required, OwnInit]


@pytest.mark.parametrize("model", ANSWERED, ids=lambda model: model.__name__)
def test_the_shortcut_answers_as_instantiating_would(model: type[BaseModel]) -> None:
    answer = _defaults_dump_non_empty(model)
    assert answer is not None
    assert answer == bool(model().model_dump(exclude_none=True))


@pytest.mark.parametrize("model", DECLINED, ids=lambda model: model.__name__)
def test_the_shortcut_declines_where_pydantic_might_do_more(model: type[BaseModel]) -> None:
    assert _defaults_dump_non_empty(model) is None


def test_the_shortcut_does_not_build_a_deferred_model() -> None:
    class Deferred(BaseModel):
        model_config = ConfigDict(defer_build=True)
        size: str = "1Gi"

    assert _defaults_dump_non_empty(Deferred) is True
    assert not Deferred.__pydantic_complete__
