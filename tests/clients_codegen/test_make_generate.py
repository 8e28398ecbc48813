"""`make generate` in a scaffolded project runs `pyop make clients`; the clients pass the project's own lint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from clients_helpers import pyop

PYOP = Path(sys.executable).with_name("pyop")


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_generate_writes_the_clientset_of_a_scaffolded_project(tmp_path: Path) -> None:
    root = tmp_path / "fleet"
    root.mkdir()
    assert pyop("init", "--domain", "my.domain", "--project-name", "fleet", cwd=root).exit_code == 0
    assert pyop("create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", cwd=root).exit_code == 0
    types = root / "fleet" / "api" / "v1" / "captain_types.py"
    types.write_text(
        types.read_text().replace(
            "# +kubebuilder:subresource:status\n", "# +kubebuilder:subresource:status\n# +genclient\n", 1
        )
    )
    run = subprocess.run(
        ["make", "generate", f"PYOP={PYOP}", f"PYTHON={sys.executable}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    clientset = root / "fleet" / "generated" / "crew_v1.py"
    assert "class CaptainClient(ResourceClient[Captain]):" in clientset.read_text()
    assert clientset.read_text().startswith((root / "hack" / "boilerplate.py.txt").read_text())
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "fleet/generated"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout
    fmt = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "fleet/generated"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert fmt.returncode == 0, fmt.stdout  # `make fmt` leaves generated code as it is: regenerating changes nothing
