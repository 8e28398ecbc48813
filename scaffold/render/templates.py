"""The template renderer: cookiecutter renders a template folder into a temporary directory, never the project.

cookiecutter's overwrite mode deletes `_copy_without_render` folders and has no notion of "add to a project", so
pyop only uses it to produce file contents; `scaffold.render.changeset` decides what reaches the user's folder.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TEMPLATES_ROOT = Path(__file__).resolve().parent.parent.parent / "project_templates"


def template_dir(name: str) -> Path:
    """A template by name (`init`, `api`, ...): a folder holding cookiecutter.json and `{{cookiecutter.slug}}/`."""
    path = TEMPLATES_ROOT / name
    if not (path / "cookiecutter.json").is_file():
        raise FileNotFoundError(f"pyop installation is missing its template {name!r} at {path}")
    return path


def render_template(name: str, context: Mapping[str, Any]) -> dict[str, bytes]:
    """Render template `name` with `context`; return {relative posix path: bytes} of every file it made.

    Imported lazily: cookiecutter and jinja2 cost more start-up time than the rest of the CLI together.
    """
    from cookiecutter.main import cookiecutter

    with tempfile.TemporaryDirectory(prefix="pyop-render-") as tmp:
        tmp_path = Path(tmp)
        out_dir = tmp_path / "out"
        out_dir.mkdir()
        rendered = cookiecutter(
            str(template_dir(name)),
            no_input=True,
            extra_context={"slug": "project", **context},
            output_dir=str(out_dir),
            # Keep cookiecutter's replay files and template cache out of the user's home.
            default_config={"replay_dir": str(tmp_path / "replay"), "cookiecutters_dir": str(tmp_path / "cc")},
            accept_hooks=False,
        )
        root = Path(rendered)
        return {
            path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted(root.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts
        }
