"""Helpers of the chart tests: run pyop in-process, kubectl kustomize and helm template, parse their YAML."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from pyop_scaffold.cli.app import app


def pyop(*args: str, cwd: Path) -> tuple[int, str]:
    """`pyop <args> --project-dir cwd` in-process; returns the exit code and stdout+stderr."""
    result = CliRunner().invoke(app, [*args, "--project-dir", str(cwd)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout + result.stderr


def ok(*args: str, cwd: Path) -> str:
    code, output = pyop(*args, cwd=cwd)
    assert code == 0, output
    return output


def load_all(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]


def run(*command: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(list(command), capture_output=True, text=True, cwd=cwd, check=False)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(command)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def kustomize(kubectl: str, root: Path) -> list[dict[str, Any]]:
    return load_all(run(kubectl, "kustomize", str(root / "config" / "default")).stdout)


def helm_template(helm: str, root: Path, *args: str, namespace: str) -> list[dict[str, Any]]:
    chart = str(root / "dist" / "chart")
    return load_all(run(helm, "template", "release", chart, "--namespace", namespace, *args).stdout)


def namespace_of(root: Path) -> str:
    data = yaml.safe_load((root / "config" / "default" / "kustomization.yaml").read_text())
    return str(data["namespace"])
