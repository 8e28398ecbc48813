"""docs/shipping.md's "Try it" commands, run as written in the sample operator (only /tmp/ points elsewhere)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "shipping.md"


def _try_it_commands() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### Try it", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line.strip()]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_try_it_commands_run(project: Callable[[str], Path], helm: str, kubectl: str, tmp_path: Path) -> None:
    commands = _try_it_commands()
    assert commands[0] == "pyop edit --plugins=helm" and "python -m pyop_scaffold.chart.compare" in commands
    root = project("sample")
    scratch = tmp_path / "out"
    scratch.mkdir()
    bin_dirs = [str(Path(sys.executable).parent), str(Path(helm).parent), str(Path(kubectl).parent)]
    env = {**os.environ, "PATH": os.pathsep.join([*bin_dirs, os.environ.get("PATH", "")])}
    for command in commands:
        line = command.replace("/tmp/", f"{scratch}/").replace("python -m", f"{sys.executable} -m")
        result = subprocess.run(["bash", "-c", line], cwd=root, env=env, capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"{command}:\n{result.stdout}\n{result.stderr}"
    assert "kind: Deployment" in (scratch / "chart.yaml").read_text()
    lean = (scratch / "lean.yaml").read_text()
    assert "ValidatingWebhookConfiguration" not in lean and "resource-policy" not in lean
