"""What a project gets for shipping: CI workflows (lint, test, and test-chart with the helm plugin) and Makefile
targets of Kubebuilder's helm plugin, run here through the project's own `make helm-lint`."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from .helpers import kustomize, ok, run

PINNED = re.compile(r"^[\w.-]+/[\w.-]+@v\d+\.\d+\.\d+$")


def _workflow(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), path
    return data


def _steps(data: dict[Any, Any]) -> list[dict[str, Any]]:
    (job,) = data["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest"
    return list(job["steps"])


def test_every_project_gets_lint_and_test_workflows_pinned(tmp_path: Path) -> None:
    root = tmp_path / "fleet"
    root.mkdir()
    ok("init", "--domain", "example.com", cwd=root)
    workflows = root / ".github" / "workflows"
    assert sorted(p.name for p in workflows.iterdir()) == ["lint.yml", "test.yml"]
    for name, command in (("lint.yml", "make lint"), ("test.yml", "make test")):
        data = _workflow(workflows / name)
        assert set(data[True]) == {"push", "pull_request"}  # YAML 1.1 reads the key `on` as True
        steps = _steps(data)
        uses = [s["uses"] for s in steps if "uses" in s]
        assert uses and all(PINNED.match(u) for u in uses), uses
        assert steps[-1]["run"] == command


def test_helm_plugin_adds_the_test_chart_workflow(project: Callable[[str], Path]) -> None:
    root = project("sample")
    ok("edit", "--plugins=helm", cwd=root)
    data = _workflow(root / ".github/workflows/test-chart.yml")
    steps = _steps(data)
    uses = [s["uses"] for s in steps if "uses" in s]
    assert all(PINNED.match(u) for u in uses), uses
    assert any(u.startswith("azure/setup-helm@") for u in uses)
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "make helm-chart" in runs and "helm lint --strict dist/chart" in runs
    assert "helm template release dist/chart --namespace sample-system" in runs
    assert "python -m pyop_scaffold.chart.compare" in runs


def test_the_workflows_compare_step_passes_on_the_generated_chart(
    project: Callable[[str], Path], helm: str, kubectl: str
) -> None:
    root = project("sample")
    ok("edit", "--plugins=helm", cwd=root)
    env = {**os.environ, "HELM": helm, "KUBECTL": kubectl}
    result = run_in(root, env, sys.executable, "-m", "pyop_scaffold.chart.compare")
    assert result.returncode == 0, result.stdout + result.stderr
    count = len(kustomize(kubectl, root)) - 1  # all but the Namespace
    assert f"renders the {count} objects of config/default (namespace sample-system)" in result.stdout
    values = root / "dist/chart/values.yaml"
    values.write_text(values.read_text().replace("  replicas: 1\n", "  replicas: 2\n"))
    drifted = run_in(root, env, sys.executable, "-m", "pyop_scaffold.chart.compare")
    assert drifted.returncode == 1
    assert drifted.stdout.startswith("differs: apps/v1/Deployment/sample-system/sample-controller-manager")


def run_in(root: Path, env: dict[str, str], *command: str) -> Any:
    import subprocess

    return subprocess.run(list(command), cwd=root, env=env, capture_output=True, text=True, check=False)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_projects_own_make_helm_lint(project: Callable[[str], Path], helm: str) -> None:
    root = project("sample")
    pyop = Path(sys.executable).with_name("pyop")
    result = run("make", "helm-lint", f"PYOP={pyop}", f"HELM={helm}", cwd=root)
    assert "1 chart(s) linted, 0 chart(s) failed" in result.stdout
    assert (root / "dist/chart/Chart.yaml").is_file()
    project_file = yaml.safe_load((root / "PROJECT").read_text())
    assert "helm.pyop.io/v2-alpha" in project_file["plugins"]
    missing = run("make", "install-helm", "HELM=/nonexistent/helm", cwd=root, check=False)
    assert missing.returncode != 0
    assert "helm not found (HELM=/nonexistent/helm): install Helm" in missing.stderr
