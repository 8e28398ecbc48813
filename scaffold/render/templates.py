"""The template renderer: templates are cookiecutter templates, rendered in memory with Jinja2.

Each folder under `project_templates/` is a valid cookiecutter template (`cookiecutter.json` plus a
`{{cookiecutter.slug}}/` tree; `tests/scaffolding/test_templates.py` renders both with cookiecutter itself and
checks the output is identical). pyop renders them with the same Jinja2 semantics (strict undefined variables,
trailing newlines kept, file names rendered, `_copy_without_render` honoured) but in memory, without cookiecutter's
environment: its extension loading and per-file compilation made `pyop init` take three times longer. Compiled
templates are cached under the user's cache folder, keyed by each template's checksum, so edits are never stale.

Nothing is written to the project here: `pyop_scaffold.render.changeset` decides what reaches the user's folder.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any


def _templates_root() -> Path:
    """Installed, the templates are package data of `pyop_scaffold.project_templates` (setup.py maps the
    repository's `project_templates/` there); in a checkout (an editable install) they sit beside `scaffold/`."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "project_templates"
    return installed if installed.is_dir() else package.parent / "project_templates"


TEMPLATES_ROOT = _templates_root()
ROOT_DIR_NAME = "{{cookiecutter.slug}}"


def template_dir(name: str) -> Path:
    """A template by name (`init`, `api`): a folder holding cookiecutter.json and `{{cookiecutter.slug}}/`."""
    path = TEMPLATES_ROOT / name
    if not (path / "cookiecutter.json").is_file() or not (path / ROOT_DIR_NAME).is_dir():
        raise FileNotFoundError(f"pyop installation is missing its template {name!r} at {path}")
    return path


def template_defaults(name: str) -> dict[str, Any]:
    return dict(json.loads((template_dir(name) / "cookiecutter.json").read_text(encoding="utf-8")))


def render_template(name: str, context: Mapping[str, Any]) -> dict[str, bytes]:
    """Render template `name` with `context` over its cookiecutter.json defaults.

    Returns {relative posix path: bytes} for every file of the template, in sorted order.
    """
    source = template_dir(name) / ROOT_DIR_NAME
    defaults = template_defaults(name)
    values = {**defaults, **context}
    unknown = sorted(set(context) - set(defaults))
    if unknown:
        raise KeyError(f"template {name!r} has no variables {unknown}")
    env = _environment(str(source))
    copy_only = values.get("_copy_without_render", [])
    scope = {"cookiecutter": values}
    files: dict[str, bytes] = {}
    for path in sorted(source.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        relative = path.relative_to(source).as_posix()
        target = env.from_string(relative).render(scope) if "{{" in relative or "{%" in relative else relative
        if any(fnmatch.fnmatch(relative, pattern) for pattern in copy_only):
            files[target] = path.read_bytes()
        else:
            files[target] = env.get_template(relative).render(scope).encode("utf-8")
    return dict(sorted(files.items()))


@lru_cache(maxsize=8)
def _environment(source: str) -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(source),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        bytecode_cache=_bytecode_cache(),
    )


def _bytecode_cache() -> Any:
    """A per-user cache of compiled templates, or none where the cache folder cannot be written."""
    import jinja2

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = base / "pyop" / "jinja"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if not os.access(folder, os.W_OK):
        return None
    return jinja2.FileSystemBytecodeCache(str(folder))
