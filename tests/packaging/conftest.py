"""pyop-kit as a stranger gets it: distributions built from a clean copy, installed into fresh environments.

The copy holds the files git would clone (tracked and new, minus ignored), so a file that only exists in this
checkout cannot make a build pass. Environments install from the index (the dependencies) and a local folder
(pyop-kit itself, which is not on the index); without the index these tests skip, naming why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Distributions:
    folder: Path
    wheel: Path
    sdist: Path


@dataclass(frozen=True)
class Environment:
    """A fresh virtual environment with pyop-kit installed from its wheel (not editable)."""

    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def env(self) -> dict[str, str]:
        """Process environment of a shell inside this virtual environment (as after `activate`)."""
        values = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "PYOP_DEBUG"}}
        values["VIRTUAL_ENV"] = str(self.root)
        values["PATH"] = f"{self.bin}{os.pathsep}{values.get('PATH', '')}"
        return values

    def run(self, *args: str | Path, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args], cwd=cwd, env=self.env(), capture_output=True, text=True, check=check, timeout=600
        )


def index_reachable(scratch: Path) -> bool:
    probe = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", str(scratch), "six==1.16.0"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    return probe.returncode == 0


def clean_copy(target: Path) -> Path:
    """The files a clone of this checkout would hold, copied to `target`."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPOSITORY,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in filter(None, listed):
        source = REPOSITORY / os.fsdecode(raw)
        if source.is_file():
            destination = target / os.fsdecode(raw)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)
    return target


@pytest.fixture(scope="session")
def index(tmp_path_factory: pytest.TempPathFactory) -> None:
    if not index_reachable(tmp_path_factory.mktemp("probe")):
        if os.environ.get("PYOP_REQUIRE_INDEX") == "1":  # CI: a skipped stranger's install is a failure
            pytest.fail("PYOP_REQUIRE_INDEX=1 but the package index is unreachable", pytrace=False)
        pytest.skip("the package index is unreachable: fresh environments cannot install pyop-kit's dependencies")


@pytest.fixture(scope="session")
def distributions(tmp_path_factory: pytest.TempPathFactory, index: None) -> Distributions:
    """An sdist, and a wheel built from that sdist (as `python -m build` does), of a clean copy."""
    source = clean_copy(tmp_path_factory.mktemp("checkout"))
    folder = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(folder), str(source)],
        capture_output=True,
        check=True,
        timeout=600,
    )
    (wheel,) = folder.glob("pyop_kit-*.whl")
    (sdist,) = folder.glob("pyop_kit-*.tar.gz")
    return Distributions(folder, wheel, sdist)


@pytest.fixture(scope="session")
def make_environment(
    tmp_path_factory: pytest.TempPathFactory, distributions: Distributions
) -> Iterator[Callable[..., Environment]]:
    """Fresh virtual environments with `pyop-kit[extras]` from the wheel plus `packages` from the index."""
    made: dict[tuple[str, ...], Environment] = {}

    def make(*requirements: str) -> Environment:
        key = tuple(requirements)
        if key not in made:
            environment = Environment(tmp_path_factory.mktemp("venv"))
            venv.create(environment.root, with_pip=True)
            environment.run(
                "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                "--find-links", distributions.folder, *requirements,
                cwd=environment.root,
            )  # fmt: skip
            made[key] = environment
        return made[key]

    yield make
