"""`pyop create apiserver` for a kind the server already serves in another version: the new version's model is a
spoke of the first version's (marked the hub), with conversion methods; a third version joins the same hub; running
again changes nothing; and the generated project's own `make lint test` passes with every version served through
the conversion (the scaffolded test of each version creates, reads and lists through the test API server)."""

from __future__ import annotations

import ast
from pathlib import Path

from apiserver_scaffold.conftest import FLUNDER, ok
from apiserver_scaffold.test_generated_project import _make

PACKAGE = "wardle_operator"


def _class_bases(path: Path, name: str) -> list[str]:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return [ast.unparse(base) for base in node.bases]
    raise AssertionError(f"no class {name} in {path}")


def _methods(path: Path, name: str) -> list[str]:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return [item.name for item in node.body if isinstance(item, ast.FunctionDef)]
    raise AssertionError(f"no class {name} in {path}")


def types_file(project: Path, version: str) -> Path:
    return project / f"{PACKAGE}/apiserver/wardle/{version}/flunder_types.py"


def test_a_second_and_third_version_become_spokes_of_the_first(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    second = ok(
        pyop("create", "apiserver", "--group", "wardle", "--version", "v1beta1", "--kind", "Flunder", cwd=project)
    )
    assert "wardle/v1beta1, Kind=Flunder converts through the hub v1alpha1" in second.stdout
    hub = types_file(project, "v1alpha1")
    assert _class_bases(hub, "Flunder") == ["Resource", "Hub"]
    assert "from pyop.webhook import Hub\n" in hub.read_text(encoding="utf-8")
    spoke = types_file(project, "v1beta1")
    assert _methods(spoke, "Flunder") == ["convert_to", "convert_from"]
    text = spoke.read_text(encoding="utf-8")
    assert f"from {PACKAGE}.apiserver.wardle.v1alpha1.flunder_types import Flunder as HubFlunder\n" in text
    assert "from typing import Self\n" in text
    hub_before = hub.read_text(encoding="utf-8")
    third = ok(pyop("create", "apiserver", "--group", "wardle", "--version", "v1", "--kind", "Flunder", cwd=project))
    assert "wardle/v1, Kind=Flunder converts through the hub v1alpha1" in third.stdout
    assert hub.read_text(encoding="utf-8") == hub_before  # marked once
    assert _methods(types_file(project, "v1"), "Flunder") == ["convert_to", "convert_from"]
    spoke_before = spoke.read_text(encoding="utf-8")
    again = ok(
        pyop("create", "apiserver", "--group", "wardle", "--version", "v1beta1", "--kind", "Flunder", cwd=project)
    )
    assert "is already served: kept its files" in again.stdout
    assert spoke.read_text(encoding="utf-8") == spoke_before
    assert hub.read_text(encoding="utf-8") == hub_before


def test_the_generated_project_serves_every_version(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    ok(pyop("create", "apiserver", "--group", "wardle", "--version", "v1beta1", "--kind", "Flunder", cwd=project))
    run = _make(project, "lint", "test")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "Success: no issues found" in run.stdout
    for name in ("test_apiserver_wardle_v1alpha1_flunder.py ..", "test_apiserver_wardle_v1beta1_flunder.py .."):
        assert name in run.stdout, run.stdout[-4000:]
