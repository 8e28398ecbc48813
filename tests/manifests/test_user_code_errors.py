"""Whatever a project's modules raise while `make manifests` imports and walks them is one `file:line: ...` line
(exit code 2, nothing written); `pyop --debug` or PYOP_DEBUG=1 prints the traceback behind it too."""

from __future__ import annotations

from pathlib import Path

import pytest
from manifests_helpers import PACKAGE, fails, project
from typer.testing import CliRunner

from pyop_scaffold.cli.app import app
from pyop_scaffold.manifests.errors import ManifestError, SourceLocation, describe_exception, location_in
from pyop_scaffold.manifests.loader import imported_project, load_kinds, user_code_errors

TYPES = f"{PACKAGE}/api/v1/ship_types.py"
SHIP = """
class ShipSpec(KubeModel):
    size: Int32 = 1


# +kubebuilder:object:root=true
class Ship(Resource, group_version=GROUP_VERSION):
    spec: ShipSpec
"""


def _line_of(root: Path, path: str, text: str) -> int:
    return next(i for i, line in enumerate((root / path).read_text().splitlines(), 1) if text in line)


def test_describe_exception_is_type_and_first_line() -> None:
    assert describe_exception(RuntimeError("first\nsecond")) == "RuntimeError: first"
    assert describe_exception(KeyError()) == "KeyError"
    assert describe_exception(SyntaxError("invalid syntax", ("x.py", 3, 1, "def (", 3, 2))) == (
        "SyntaxError: invalid syntax"
    )


def test_location_is_the_innermost_project_frame(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text("def boom():\n    raise ValueError('x')\n")
    namespace: dict[str, object] = {}
    exec(compile((tmp_path / "mod.py").read_text(), str(tmp_path / "mod.py"), "exec"), namespace)
    with pytest.raises(ValueError) as caught:
        namespace["boom"]()  # type: ignore[operator]
    assert location_in(caught.value, tmp_path) == SourceLocation("mod.py", 2)
    assert location_in(caught.value, tmp_path / "elsewhere") is None
    error = SyntaxError("bad", (str(tmp_path / "pkg" / "a.py"), 7, 1, "x", 7, 2))
    assert location_in(error, tmp_path) == SourceLocation("pkg/a.py", 7)


def test_load_kinds_reports_every_module_that_fails_once(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {
            "v1/ship_types.py": SHIP,
            "v1/crane_types.py": "#!raw\nraise RuntimeError('no cranes today')\n",
            "v1/dock_types.py": "#!raw\nimport not_a_module_anywhere\n",
            # Importing the failing module again fails in the same place: reported once.
            "v1/yard_types.py": f"#!raw\nimport {PACKAGE}.api.v1.crane_types\n",
        },
    )
    with imported_project(root, PACKAGE), pytest.raises(ManifestError) as caught:
        load_kinds(root, PACKAGE)
    assert caught.value.problems == [
        f"{PACKAGE}/api/v1/crane_types.py:1: cannot import {PACKAGE}.api.v1.crane_types: RuntimeError: no cranes "
        "today (pyop --debug or PYOP_DEBUG=1 shows the traceback)",
        f"{PACKAGE}/api/v1/dock_types.py:1: cannot import {PACKAGE}.api.v1.dock_types: ModuleNotFoundError: No "
        "module named 'not_a_module_anywhere'",
    ]
    assert [type(cause) for cause in caught.value.causes] == [RuntimeError, ModuleNotFoundError]


def test_user_code_errors_locates_what_it_catches(tmp_path: Path) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": SHIP + "\n\ndef check():\n    return 1 / 0\n"})
    with imported_project(root, PACKAGE), pytest.raises(ManifestError) as caught, user_code_errors(root):
        load_kinds(root, PACKAGE)
        import importlib

        importlib.import_module(f"{PACKAGE}.api.v1.ship_types").check()
    line = _line_of(root, TYPES, "return 1 / 0")
    assert caught.value.problems == [
        f"{TYPES}:{line}: ZeroDivisionError: division by zero (pyop --debug or PYOP_DEBUG=1 shows the traceback)"
    ]
    assert isinstance(caught.value.causes[0], ZeroDivisionError)


def test_pyop_errors_pass_through_unchanged(tmp_path: Path) -> None:
    error = ManifestError(["a.py:1: already one line"])
    with pytest.raises(ManifestError) as caught, user_code_errors(tmp_path):
        raise error
    assert caught.value is error


RAISING = SHIP.replace("class ShipSpec", "raise RuntimeError('boom')\n\n\nclass ShipSpec")


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stderr


def test_without_debug_the_error_is_one_line(tmp_path: Path) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": RAISING})
    stderr = fails(root)
    line = _line_of(root, TYPES, "raise RuntimeError('boom')")
    assert stderr == (
        f"Error: {TYPES}:{line}: cannot import {PACKAGE}.api.v1.ship_types: RuntimeError: boom (pyop --debug or "
        "PYOP_DEBUG=1 shows the traceback)\n"
    )


@pytest.mark.parametrize(
    ("args", "env"),
    [(("--debug",), None), ((), {"PYOP_DEBUG": "1"})],
    ids=["--debug", "PYOP_DEBUG=1"],
)
def test_debug_prints_the_traceback_of_the_users_code_then_the_line(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str] | None
) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": RAISING})
    code, stderr = _run(*args, "make", "manifests", "--project-dir", str(root), env=env)
    assert code == 2
    assert stderr.startswith("Traceback (most recent call last):\n")
    assert f'{root / TYPES}", line {_line_of(root, TYPES, "boom")}' in stderr
    assert "RuntimeError: boom\n" in stderr
    assert stderr.endswith(
        f"Error: {TYPES}:{_line_of(root, TYPES, 'boom')}: cannot import {PACKAGE}.api.v1.ship_types: "
        "RuntimeError: boom (pyop --debug or PYOP_DEBUG=1 shows the traceback)\n"
    )
    assert not (root / "config" / "crd" / "bases").exists()


def test_debug_shows_the_cause_of_a_located_error(tmp_path: Path) -> None:
    """An undefined annotation name is reported at its field; the traceback is pydantic's, where it was found."""
    root = project(tmp_path / "op", {"v1/ship_types.py": SHIP.replace("size: Int32 = 1", "size: Integer = 1")})
    code, stderr = _run("--debug", "make", "manifests", "--project-dir", str(root))
    assert code == 2
    assert "PydanticUndefinedAnnotation: name 'Integer' is not defined" in stderr
    assert stderr.splitlines()[-1] == (
        f"Error: {TYPES}:{_line_of(root, TYPES, 'size: Integer')}: field ShipSpec.size: name 'Integer' is not "
        f"defined; import or define Integer in {TYPES}"
    )


def test_debug_off_again_in_the_next_run(tmp_path: Path) -> None:
    """The flag is per run: an in-process caller (the tests, an IDE) does not keep getting tracebacks."""
    root = project(tmp_path / "op", {"v1/ship_types.py": RAISING})
    assert _run("--debug", "make", "manifests", "--project-dir", str(root))[1].startswith("Traceback")
    code, stderr = _run("make", "manifests", "--project-dir", str(root))
    assert code == 2 and stderr.startswith("Error: ") and len(stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("annotation", "fix"),
    [
        ("Any", "add `from typing import Any`"),
        ("Quantity | None", "add `from pyop.api import Quantity`"),
        ("datetime.date | None", "add `import datetime`"),
        ("Widget | None", f"import or define Widget in {TYPES}"),
    ],
)
def test_an_undefined_name_says_what_to_import(tmp_path: Path, annotation: str, fix: str) -> None:
    name = annotation.split(" ")[0].split(".")[0]
    header = (
        "#!raw\nfrom __future__ import annotations\n\nfrom pyop.api import Int32, KubeModel, Resource\n\n"
        "from .groupversion_info import GROUP_VERSION\n"
    )
    body = header + SHIP.replace("size: Int32 = 1", f"extra: {annotation} = None")
    root = project(tmp_path / "op", {"v1/ship_types.py": body})
    line = _line_of(root, TYPES, "extra: ")
    assert fails(root) == f"Error: {TYPES}:{line}: field ShipSpec.extra: name {name!r} is not defined; {fix}\n"
