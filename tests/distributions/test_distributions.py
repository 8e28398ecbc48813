"""What pyop-kit's wheel and sdist hold, and what its installs give: read from the built files."""

from __future__ import annotations

import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

from distributions.environments import REPOSITORY, Distributions, Environment
from pyop_scaffold.render.templates import TEMPLATES_ROOT

# What an operator's image may not install: the CLI's and the test server's packages.
DEV_TIME_PACKAGES = {"typer", "rich", "cookiecutter", "kubernetes-validate", "ruamel.yaml", "cel-python", "pytest"}


def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_wheel_installs_only_pyops_own_import_names(distributions: Distributions) -> None:
    top_level = {name.split("/")[0] for name in wheel_names(distributions.wheel)}
    assert top_level == {"pyop", "pyop_scaffold", f"{distributions.wheel.name.split('-py3')[0]}.dist-info"}


def test_the_wheel_holds_every_template_file_and_module(distributions: Distributions) -> None:
    names = set(wheel_names(distributions.wheel))
    templates = {
        "pyop_scaffold/project_templates/" + path.relative_to(TEMPLATES_ROOT).as_posix()
        for path in TEMPLATES_ROOT.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert templates and templates <= names, sorted(templates - names)[:5]
    modules = {
        path.relative_to(REPOSITORY).as_posix().replace("scaffold/", "pyop_scaffold/", 1)
        for folder in ("pyop", "scaffold")
        for path in (REPOSITORY / folder).rglob("*.py")
    }
    assert modules <= names, sorted(modules - names)[:5]


def test_the_sdist_builds_the_wheel_it_was_made_from(distributions: Distributions) -> None:
    """`python -m build` made the wheel from the sdist: the sdist holds the backend, setup.py and templates."""
    with tarfile.open(distributions.sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"tools/pyop_build_backend.py", "setup.py", "pyproject.toml", "MANIFEST.in"} <= names
    assert any(name.startswith("project_templates/init/") for name in names)


def test_metadata_names_pyop_kit_with_an_spdx_licence_and_a_runtime_only_base(distributions: Distributions) -> None:
    with zipfile.ZipFile(distributions.wheel) as archive:
        (metadata_name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
    assert metadata["Name"] == "pyop-kit"
    assert metadata["License-Expression"] == "Apache-2.0"
    base = [r for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r]
    base_names = {r.split(";")[0].split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip() for r in base}
    assert base_names and not base_names & DEV_TIME_PACKAGES
    assert "pyop" not in base_names


def test_a_runtime_only_install_imports_the_runtime_and_explains_the_cli(make_environment, tmp_path: Path) -> None:
    environment: Environment = make_environment("pyop-kit")
    imported = environment.run(
        "python", "-c", "import pyop.manager, pyop.client, pyop.controller, pyop.webhook, pyop.testing", cwd=tmp_path
    )
    assert imported.returncode == 0
    listed = environment.run("python", "-m", "pip", "list", "--format=freeze", cwd=tmp_path).stdout.lower()
    installed = {line.split("==")[0] for line in listed.splitlines()}
    assert not installed & {name.lower().replace(".", "-") for name in DEV_TIME_PACKAGES}
    cli = environment.run("pyop", "--version", cwd=tmp_path, check=False)
    assert cli.returncode == 2
    assert cli.stderr.count("\n") == 1 and "pip install 'pyop-kit[cli]" in cli.stderr


def test_pytest_starts_where_pyop_kit_is_installed_without_pytest_asyncio(make_environment, tmp_path: Path) -> None:
    """The pytest11 entry point loads in every pytest run: it must not need the testing extra."""
    environment: Environment = make_environment("pyop-kit", "pytest")
    assert "pytest-asyncio" not in environment.run("python", "-m", "pip", "list", cwd=tmp_path).stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    assert environment.run("python", "-m", "pytest", cwd=empty, check=False).returncode == 5  # no tests collected
    (empty / "test_uses_the_fixture.py").write_text("def test_it(test_api_server):\n    pass\n")
    (empty / "test_plain.py").write_text("def test_plain():\n    assert 1 + 1 == 2\n")
    run = environment.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=empty, check=False)
    assert "1 passed" in run.stdout and "1 error" in run.stdout, run.stdout
    assert "pip install 'pyop-kit[testing]'" in run.stdout
