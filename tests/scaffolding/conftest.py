"""Fixtures for scaffolder tests: run the CLI in-process and snapshot project folders."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pyop_scaffold.cli.app import app


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def pyop() -> Callable[..., CliResult]:
    """Run `pyop <args>` in-process with the given project folder; returns exit code and both streams."""
    runner = CliRunner()

    def run(*args: str, cwd: Path) -> CliResult:
        result = runner.invoke(app, [*args, "--project-dir", str(cwd)] if _takes_dir(args) else list(args))
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return run


def _takes_dir(args: tuple[str, ...]) -> bool:
    return bool(args) and args[0] in ("init", "create", "make", "edit") and "--help" not in args


@pytest.fixture
def tree() -> Callable[[Path], dict[str, str]]:
    """Snapshot a folder: compare two snapshots to prove a command wrote nothing."""
    return snapshot


def snapshot(root: Path) -> dict[str, str]:
    """{relative path: sha256} of every file under root (directories included as entries)."""
    result = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if "__pycache__" in path.parts or ".pytest_cache" in path.parts:
            continue
        result[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "<dir>"
    return result


@pytest.fixture
def kubectl() -> str:
    path = shutil.which("kubectl")
    if path is None:
        pytest.skip("kubectl is not installed: `kubectl kustomize` builds config/ in these tests")
    return path


@pytest.fixture
def project_pytest() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run a generated project's own pytest in it (a fresh interpreter, this run's pytest options left out)."""
    return run_project_pytest


def run_project_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
