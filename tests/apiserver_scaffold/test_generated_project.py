"""A generated project with an aggregated API server passes its own `make lint` and `make test`: the scaffolded
tests start pyop's test API server, run the server in-process registered through an APIService, create, read and
list each kind with pyop's client through the aggregation, and see a user without RBAC refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from apiserver_scaffold.conftest import FLUNDER, ok

BIN = Path(sys.executable).parent


def _make(project: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        ["make", *targets, f"PYTHON={sys.executable}", f"PYOP={BIN / 'pyop'}"],
        cwd=project, capture_output=True, text=True, env=env, timeout=900, check=False,
    )  # fmt: skip


def test_make_lint_and_make_test_pass(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", cwd=project))
    ok(pyop("create", "apiserver", *FLUNDER, "--kind", "Fischer", cwd=project))
    ok(pyop("create", "apiserver", "--group", "wardle", "--version", "v1beta1", "--kind", "Fortune", cwd=project))
    ok(
        pyop(
            "create",
            "apiserver",
            "--group",
            "zoo",
            "--version",
            "v1",
            "--kind",
            "Keeper",
            "--cluster-scoped",
            cwd=project,
        )
    )
    run = _make(project, "lint", "test")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "Success: no issues found" in run.stdout
    for name in (
        "test_apiserver_wardle_v1alpha1_flunder.py ..",
        "test_apiserver_wardle_v1alpha1_fischer.py ..",
        "test_apiserver_wardle_v1beta1_fortune.py ..",
        "test_apiserver_zoo_v1_keeper.py ..",
    ):
        assert name in run.stdout, run.stdout[-4000:]
    assert " failed" not in run.stdout and " passed" in run.stdout


def test_the_entry_point_takes_k8s_apiserver_flags(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    run = subprocess.run(
        [sys.executable, "-m", "wardle_operator.apiserver", "--help"],
        cwd=project, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: python -m wardle_operator.apiserver")
    for flag in ("--secure-port", "--tls-cert-file", "--requestheader-client-ca-file", "--storage-backend"):
        assert flag in run.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "wardle_operator.apiserver", "--storage-backend=etcd3"],
        cwd=project, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and "--etcd-servers" in bad.stderr
