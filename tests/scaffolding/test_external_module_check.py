"""`--external-api-path` is checked where the project runs before anything is written (issue 11): the module must
import and define the kind, unless `--external-api-module` names the requirement that will install it."""

from __future__ import annotations

from pathlib import Path

import pytest

EXTERNAL = ("--group", "cert-manager", "--version", "v1", "--kind", "Certificate", "--external-api-domain", "io")
ISSUER_ONLY = '''"""cert-manager models without the Certificate."""

from pyop.api import GroupVersion, Resource


class Issuer(Resource, group_version=GroupVersion("cert-manager.io", "v1")):
    """An Issuer."""
'''


@pytest.fixture
def project(tmp_path: Path, pyop) -> Path:  # type: ignore[no-untyped-def]
    root = tmp_path / "cert-operator"
    root.mkdir()
    assert pyop("init", "--domain", "example.com", cwd=root).exit_code == 0
    return root


def _models(root: Path, text: str) -> None:
    (root / "certmanager_models").mkdir()
    (root / "certmanager_models" / "__init__.py").write_text("", encoding="utf-8")
    (root / "certmanager_models" / "v1.py").write_text(text, encoding="utf-8")


def _refused(pyop, tree, root: Path, args: tuple[str, ...], message: str) -> None:  # type: ignore[no-untyped-def]
    before = tree(root)
    result = pyop(*args, cwd=root)
    assert result.exit_code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert tree(root) == before


@pytest.mark.parametrize(
    "command",
    [("create", "api", "--resource=false", "--controller"), ("create", "webhook", "--programmatic-validation")],
)
def test_a_module_that_cannot_be_imported_is_refused_without_a_requirement(
    project: Path, pyop, tree, command: tuple[str, ...]
) -> None:  # type: ignore[no-untyped-def]
    args = (*command, *EXTERNAL, "--external-api-path", "no_such_models.v1")
    _refused(pyop, tree, project, args, "invalid --external-api-path 'no_such_models.v1': no module of that name")


def test_with_a_requirement_a_missing_module_is_a_note_to_install_it(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    result = pyop(
        "create", "api", "--resource=false", "--controller", *EXTERNAL,
        "--external-api-path", "certmanager_models.v1", "--external-api-module", "certmanager-models>=1.20",
        cwd=project,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "certmanager_models.v1 is not importable here yet: install 'certmanager-models>=1.20'" in result.stdout
    assert (project / "cert_operator" / "controllers" / "certificate_controller.py").is_file()


def test_a_module_without_the_kind_is_refused_naming_its_models(project: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    _models(project, ISSUER_ONLY)
    args = (
        "create",
        "api",
        "--resource=false",
        "--controller",
        *EXTERNAL,
        "--external-api-path",
        "certmanager_models.v1",
    )
    _refused(
        pyop, tree, project, args, "invalid --kind 'Certificate': certmanager_models.v1 has no class Certificate; "
        "its models are Issuer",
    )  # fmt: skip


def test_a_module_that_fails_to_import_is_refused_with_its_error(project: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    _models(project, 'raise RuntimeError("broken models")\n')
    args = ("create", "webhook", "--programmatic-validation", *EXTERNAL, "--external-api-path", "certmanager_models.v1")
    _refused(
        pyop, tree, project, args,
        "invalid --external-api-path 'certmanager_models.v1': importing it failed: RuntimeError: broken models",
    )  # fmt: skip
