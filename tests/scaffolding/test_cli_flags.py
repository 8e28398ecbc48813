"""The CLI's small promises: Kubebuilder's `--flag=false` booleans, `pyop completion`, `--verbose` reports, and the
name rules that keep generated Python importable."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pyop_scaffold.errors import UsageError
from pyop_scaffold.project import names

INIT = ("init", "--domain", "example.com")
CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")
TEMPLATES = Path(__file__).resolve().parents[2] / "project_templates"


def _project(root: Path, pyop) -> Path:  # type: ignore[no-untyped-def]
    root.mkdir(parents=True, exist_ok=True)
    assert pyop(*INIT, cwd=root).exit_code == 0
    return root


def _resources(root: Path) -> list[dict[str, object]]:
    return yaml.safe_load((root / "PROJECT").read_text())["resources"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("flags", "api", "controller"),
    [
        (("--resource=false",), False, True),
        (("--no-resource",), False, True),
        (("--controller=false",), True, False),
        (("--controller=False", "--resource=true"), True, False),
        (("--controller=0",), True, False),
        (("--no-controller", "--controller=true"), True, True),
        (("--controller=f", "--controller"), True, True),
    ],
)
def test_create_api_takes_kubebuilders_boolean_spelling(
    tmp_path: Path,
    pyop,  # type: ignore[no-untyped-def]
    flags: tuple[str, ...],
    api: bool,
    controller: bool,
) -> None:
    root = _project(tmp_path / "op", pyop)
    result = pyop("create", "api", *CAPTAIN, *flags, cwd=root)
    assert result.exit_code == 0, result.stderr
    (entry,) = _resources(root)
    assert ("api" in entry) is api
    assert bool(entry.get("controller")) is controller
    assert (root / "op/api/v1/captain_types.py").exists() is api
    assert (root / "op/controllers/captain_controller.py").exists() is controller


def test_namespaced_false_is_cluster_scoped(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop)
    assert pyop("create", "api", *CAPTAIN, "--namespaced=false", cwd=root).exit_code == 0
    (entry,) = _resources(root)
    assert entry["api"] == {"crdVersion": "v1", "namespaced": False}


def test_create_webhook_flags_take_a_value(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop)
    assert pyop("create", "api", *CAPTAIN, cwd=root).exit_code == 0
    result = pyop(
        "create", "webhook", *CAPTAIN, "--defaulting", "--defaulting=false", "--programmatic-validation=true", cwd=root
    )
    assert result.exit_code == 0, result.stderr
    (entry,) = _resources(root)
    assert entry["webhooks"] == {"validation": True, "webhookVersion": "v1"}


def test_a_value_that_looks_like_a_flag_is_left_alone(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    """The value of an option that takes one is never read as a flag (`--owner --force=false` names the owner)."""
    root = tmp_path / "op"
    root.mkdir()
    assert pyop("init", "--owner", "--force=false", cwd=root).exit_code == 0
    assert "Copyright --force=false." in (root / "hack/boilerplate.py.txt").read_text()


def test_init_flags_take_a_value(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "op"
    root.mkdir()
    assert pyop("init", "--multigroup=true", "--namespaced=false", cwd=root).exit_code == 0
    project = yaml.safe_load((root / "PROJECT").read_text())
    assert project["multigroup"] is True
    assert "namespaced" not in project


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_completion_prints_the_script_typer_completes_with(pyop, shell: str) -> None:  # type: ignore[no-untyped-def]
    result = pyop("completion", shell, cwd=Path("."))
    assert result.exit_code == 0
    assert "_PYOP_COMPLETE" in result.stdout
    assert result.stdout.endswith("\n")


def test_completion_script_completes_commands() -> None:
    """The variable the bash script sets makes the installed `pyop` answer with completions."""
    command = Path(sys.executable).with_name("pyop")
    if not command.is_file():
        pytest.skip("no pyop console script beside this interpreter")
    script = subprocess.run([command, "completion", "bash"], capture_output=True, text=True, check=True).stdout
    var = re.search(r"(_PYOP_COMPLETE)=complete_bash", script)
    assert var is not None
    env = {**os.environ, var.group(1): "complete_bash", "COMP_WORDS": "pyop cre", "COMP_CWORD": "1"}
    answer = subprocess.run([command], capture_output=True, text=True, env=env, check=False).stdout
    assert answer.split() == ["create"]


def test_unchanged_files_are_listed_with_verbose(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop)
    assert pyop("create", "api", *CAPTAIN, cwd=root).exit_code == 0
    assert pyop("make", "manifests", cwd=root).exit_code == 0
    quiet = pyop("make", "manifests", cwd=root)
    assert re.search(r"^  \d+ file\(s\) unchanged \(--verbose lists them\)$", quiet.stdout, re.MULTILINE)
    assert "unchanged  config/" not in quiet.stdout
    verbose = pyop("make", "manifests", "--verbose", cwd=root)
    assert "  unchanged  config/crd/bases/crew.example.com_captains.yaml" in verbose.stdout.splitlines()
    assert "file(s) unchanged" not in verbose.stdout


def _kind_template_names() -> set[str]:
    """Every UpperCamelCase name a kind's scaffold imports or defines at module level, besides the kind's own."""
    found: set[str] = set()
    for folder in ("api", "webhook"):
        for path in (TEMPLATES / folder).rglob("*.py"):
            text = re.sub(r"\{\{[^}]*\}\}", "Kind", path.read_text())  # the kind's own names: not a clash
            text = re.sub(r"\{%[^%]*%\}", "", text)
            for line in text.splitlines():
                if line.startswith(("from ", "import ", "class ")) or re.match(r"[A-Za-z_]\w* = ", line):
                    try:
                        tree = ast.parse(line.strip() + (" pass" if line.startswith("class ") else ""))
                    except SyntaxError:
                        continue
                    for node in ast.walk(tree):
                        if isinstance(node, ast.alias):
                            found.add((node.asname or node.name).split(".")[0])
                        elif isinstance(node, ast.ClassDef):
                            found.add(node.name)
                        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                            found.add(node.id)
    return {name for name in found if re.fullmatch(r"[A-Z][a-z]\w*", name) and "Kind" not in name}


def test_reserved_kinds_are_the_names_the_kind_scaffolds_bind() -> None:
    bound = _kind_template_names()
    assert "Manager" in bound  # the scan reads the templates at all
    assert bound <= names.RESERVED_KINDS, sorted(bound - names.RESERVED_KINDS)


@pytest.mark.parametrize(
    ("validator", "value"),
    [
        (names.validate_domain, "example.com\n"),
        (names.validate_group, "crew\n"),
        (names.validate_version, "v1\n"),
        (names.validate_kind, "Captain\n"),
        (names.validate_plural, "captains\n"),
        (names.validate_project_name, "op\n"),
        (names.validate_package, "op\n"),
        (lambda v: names.validate_webhook_path(v, "--defaulting-path"), "/mutate\n"),
        (lambda v: names.validate_module_path(v, "op", "path"), "op.api.v1\n"),
    ],
)
def test_no_name_takes_a_trailing_newline(validator, value: str) -> None:  # type: ignore[no-untyped-def]
    validator(value.rstrip("\n"))
    with pytest.raises(UsageError, match=re.escape(repr(value))):
        validator(value)


@pytest.mark.parametrize("name", ["json", "asyncio", "typing", "pydantic", "pyop", "pyop-scaffold", "yaml"])
def test_project_names_that_shadow_imported_modules(name: str) -> None:
    with pytest.raises(UsageError, match="would shadow"):
        names.validate_project_name(name)


@pytest.mark.parametrize("name", ["memcached-operator", "guestbook", "op"])
def test_ordinary_project_names(name: str) -> None:
    assert names.validate_project_name(name) == name
