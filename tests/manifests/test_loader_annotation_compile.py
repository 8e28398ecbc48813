"""While a project is imported, `typing` compiles each distinct string annotation once; afterwards it is as before."""

from __future__ import annotations

import typing

from pydantic import BaseModel

from pyop_scaffold.manifests.loader import _annotations_compiled_once


def test_forward_references_share_one_compiled_code_inside_and_typing_is_restored_after() -> None:
    with _annotations_compiled_once():
        first, second = typing.ForwardRef("list[int] | None"), typing.ForwardRef("list[int] | None")
        assert first.__forward_code__ is second.__forward_code__

        class Model(BaseModel):  # annotations given as strings still resolve to the same types
            values: list[int] | None = None

        Model.model_rebuild()
        assert Model(values=[1]).values == [1]
    assert "compile" not in vars(typing)
    assert typing.ForwardRef("x").__forward_code__ is not typing.ForwardRef("x").__forward_code__


def test_a_compile_someone_else_put_in_typing_is_left_alone() -> None:
    def theirs(*args: object) -> object:
        return compile(*args)  # type: ignore[call-overload]

    typing.compile = theirs  # type: ignore[attr-defined]
    try:
        with _annotations_compiled_once():
            assert typing.compile is theirs  # type: ignore[attr-defined]
        assert typing.compile is theirs  # type: ignore[attr-defined]
    finally:
        del typing.compile  # type: ignore[attr-defined]
