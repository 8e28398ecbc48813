"""The apiserver template renders with pyop's in-memory renderer exactly as cookiecutter renders it (the rule every
folder under project_templates/ follows), in both scopes."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyop_scaffold.render.templates import render_template, template_dir


@pytest.mark.parametrize(
    "context",
    [
        {"kind": "Flunder", "plural": "flunders", "namespaced": True, "license_header": "# Copyright X.\n\n"},
        {"kind": "Fischer", "kind_module": "fischer", "plural": "fischers", "namespaced": False},
    ],
)
def test_renderer_matches_cookiecutter(tmp_path: Path, context: dict[str, object]) -> None:
    from cookiecutter.main import cookiecutter

    rendered_dir = Path(
        cookiecutter(
            str(template_dir("apiserver")),
            no_input=True,
            extra_context=context,
            output_dir=str(tmp_path / "out"),
            default_config={"replay_dir": str(tmp_path / "replay"), "cookiecutters_dir": str(tmp_path / "cc")},
            accept_hooks=False,
        )
    )
    expected = {
        p.relative_to(rendered_dir).as_posix(): p.read_bytes() for p in sorted(rendered_dir.rglob("*")) if p.is_file()
    }
    assert render_template("apiserver", context) == expected
    assert ("scope=Cluster" in expected["types.py"].decode()) is not context["namespaced"]
