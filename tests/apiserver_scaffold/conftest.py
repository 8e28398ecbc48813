"""Fixtures for `pyop create apiserver` tests: the scaffolder's (the CLI in-process, folder snapshots, kubectl, the
generated project's own pytest), and a project made by `pyop init`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from scaffolding.conftest import CliResult, kubectl, project_pytest, pyop, tree  # noqa: F401  (fixtures)

INIT = ("init", "--domain", "example.com")
FLUNDER = ("--group", "wardle", "--version", "v1alpha1", "--kind", "Flunder")


def ok(result: CliResult) -> CliResult:
    assert result.exit_code == 0, result.stdout + result.stderr
    return result


@pytest.fixture
def project(tmp_path: Path, pyop: Callable[..., CliResult]) -> Path:  # noqa: F811
    root = tmp_path / "wardle-operator"
    root.mkdir()
    ok(pyop(*INIT, cwd=root))
    return root
