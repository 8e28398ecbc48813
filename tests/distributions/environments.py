"""Helpers of the distribution tests: clean copies of the checkout, built distributions, fresh environments.

The copy holds the files git would clone (tracked and new, minus ignored), so a file that only exists in this
checkout cannot make a build pass. Environments install from the index (the dependencies) and a local folder
(pyop-kit itself, which is not on the index); without the index these tests skip, naming why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

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
