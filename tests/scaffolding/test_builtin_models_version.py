"""The built-in kinds' models follow the project's Kubernetes version (issue 11: "of a chosen Kubernetes minor
version ... selectable, default the newest one pyop bundles").

A project at pyop's own models' version imports `pyop.api.k8s`; one at another version gets those models generated
from that version's definitions as `<package>.k8s` (by `pyop init`, `pyop edit --kubernetes-version` and
`pyop make models`), and its scaffolded controllers of built-in kinds import them.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from pyop.api.definitions import load_definitions
from pyop.api.k8s import KUBERNETES_VERSION
from pyop_scaffold.project.builtin_models import GENERATED_HEADER

OLD = "1.33"
DEPLOYMENT = ("--group", "apps", "--version", "v1", "--kind", "Deployment", "--resource=false", "--controller")
POD_SPEC = "io.k8s.api.core.v1.PodSpec"


def _init(root: Path, pyop, *flags: str) -> Path:  # type: ignore[no-untyped-def]
    root.mkdir(parents=True)
    result = pyop("init", "--domain", "example.com", *flags, cwd=root)
    assert result.exit_code == 0, result.stderr
    return root


def _pod_spec_fields_only_in_newest() -> set[str]:
    old = set(load_definitions(OLD)[POD_SPEC]["properties"])
    new = set(load_definitions(KUBERNETES_VERSION)[POD_SPEC]["properties"])
    return new - old


def _import_models(root: Path, module: str) -> object:
    """Import the project's generated module in a fresh interpreter; returns the PodSpec's wire names."""
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        f"from {module} import PodSpec\n"
        "print(json.dumps(sorted(f.alias or n for n, f in PodSpec.model_fields.items())))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    import json

    return set(json.loads(result.stdout))


def test_init_at_another_version_writes_that_versions_models_and_controllers_import_them(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    newer_fields = _pod_spec_fields_only_in_newest()
    assert newer_fields, f"the test needs a PodSpec field added after {OLD}"
    root = _init(tmp_path / "kv", pyop, "--kubernetes-version", OLD)
    init_py = root / "kv" / "k8s" / "core" / "v1" / "__init__.py"
    assert init_py.read_text(encoding="utf-8").startswith(f"{GENERATED_HEADER}from the Kubernetes {OLD} ")

    fields = _import_models(root, "kv.k8s.core.v1")
    assert "containers" in fields and not fields & newer_fields
    pyops_own = {f.alias or n for n, f in importlib.import_module("pyop.api.k8s.core.v1").PodSpec.model_fields.items()}
    assert newer_fields <= pyops_own

    result = pyop("create", "api", *DEPLOYMENT, cwd=root)
    assert result.exit_code == 0, result.stderr
    controller = (root / "kv" / "controllers" / "deployment_controller.py").read_text(encoding="utf-8")
    assert "from kv.k8s.apps.v1 import Deployment" in controller
    assert "pyop.api.k8s" not in controller
    assert "path: kv.k8s.apps.v1" in (root / "PROJECT").read_text(encoding="utf-8")


def test_the_generated_projects_own_lint_and_tests_pass_on_its_models(tmp_path: Path, pyop, project_pytest) -> None:  # type: ignore[no-untyped-def]
    root = _init(tmp_path / "kv", pyop, "--kubernetes-version", OLD)
    assert pyop("create", "api", *DEPLOYMENT, cwd=root).exit_code == 0
    assert pyop("make", "manifests", cwd=root).exit_code == 0
    for command in (["ruff", "check", "."], ["mypy", "kv"]):
        result = subprocess.run([sys.executable, "-m", *command], cwd=root, capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
    result = project_pytest(root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout


def test_make_models_again_changes_nothing_and_at_pyops_version_generates_nothing(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _init(tmp_path / "kv", pyop, "--kubernetes-version", OLD)
    before = tree(root)
    result = pyop("make", "models", cwd=root)
    assert result.exit_code == 0, result.stderr
    assert tree(root) == before
    assert "unchanged" in result.stdout

    newest = _init(tmp_path / "new", pyop)
    before = tree(newest)
    result = pyop("make", "models", cwd=newest)
    assert result.exit_code == 0, result.stderr
    assert "imported from pyop.api.k8s; nothing to generate" in result.stdout
    assert tree(newest) == before


def test_a_users_file_in_the_models_folder_is_kept_unless_forced(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _init(tmp_path / "kv", pyop, "--kubernetes-version", OLD)
    mine = root / "kv" / "k8s" / "apps" / "v1" / "__init__.py"
    mine.write_text("# my own apps models\n", encoding="utf-8")
    before = tree(root)
    result = pyop("make", "models", cwd=root)
    assert result.exit_code == 2
    assert "kv/k8s/apps/v1/__init__.py" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert tree(root) == before
    result = pyop("make", "models", "--force", cwd=root)
    assert result.exit_code == 0, result.stderr
    assert mine.read_text(encoding="utf-8").startswith(GENERATED_HEADER)


def test_edit_to_another_version_regenerates_and_empties_what_that_version_lacks(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _init(tmp_path / "kv", pyop, "--kubernetes-version", OLD)
    # A generated file of a type this version has and the next may not: stands in for an alpha type dropped later.
    retired = root / "kv" / "k8s" / "core" / "v1" / "_gone_in_a_later_release.py"
    retired.write_text(f"{GENERATED_HEADER}from the Kubernetes {OLD} OpenAPI definitions: do not edit.\n")
    result = pyop("edit", "--kubernetes-version", "1.34", cwd=root)
    assert result.exit_code == 0, result.stderr
    header = (root / "kv" / "k8s" / "core" / "v1" / "__init__.py").read_text(encoding="utf-8").splitlines()[0]
    assert "Kubernetes 1.34 " in header
    assert "Not generated for this Kubernetes version any more" in retired.read_text(encoding="utf-8")
    assert "_gone_in_a_later_release.py: not in Kubernetes 1.34; emptied, delete it" in result.stdout

    result = pyop("edit", "--kubernetes-version", KUBERNETES_VERSION, cwd=root)
    assert result.exit_code == 0, result.stderr
    assert f"built-in kinds now come from pyop.api.k8s (Kubernetes {KUBERNETES_VERSION})" in result.stdout
    assert "Kubernetes 1.34 " in (root / "kv" / "k8s" / "core" / "v1" / "__init__.py").read_text(encoding="utf-8")


def test_make_models_outside_a_project_is_one_line_and_exit_2(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    result = pyop("make", "models", cwd=tmp_path)
    assert result.exit_code == 2
    assert "no PROJECT file" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_models_written_are_byte_identical_across_runs(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    first = tree(_init(tmp_path / "a" / "kv", pyop, "--kubernetes-version", OLD))
    second = tree(_init(tmp_path / "b" / "kv", pyop, "--kubernetes-version", OLD))
    models = {path: digest for path, digest in first.items() if path.startswith("kv/k8s/")}
    assert len(models) > 100
    assert models == {path: digest for path, digest in second.items() if path.startswith("kv/k8s/")}
