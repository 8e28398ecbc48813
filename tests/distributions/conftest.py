"""pyop-kit as a stranger gets it: distributions built from a clean copy, installed into fresh environments.

Environments install from the index (the dependencies) and a local folder (pyop-kit itself, which is not on the
index); without the index these tests skip, naming why (and fail under PYOP_REQUIRE_INDEX=1, as in CI).
"""

from __future__ import annotations

import subprocess
import sys
import venv
from collections.abc import Callable, Iterator

import pytest

from distributions.environments import Distributions, Environment, clean_copy


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
