"""docs/getting-started.md, run command by command as a stranger would: pyop-kit from its wheel (not editable),
in a fresh virtual environment, through the generated project's own `make lint` and `make test`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from distributions.environments import REPOSITORY, Distributions
from distributions.tutorial import blocks, script, script_for

GETTING_STARTED = REPOSITORY / "docs" / "getting-started.md"


def test_every_command_of_getting_started_runs_from_the_wheel(distributions: Distributions, tmp_path: Path) -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed: the tutorial builds config/default with kubectl kustomize")
    environment = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYOP_DEBUG"}}
    environment["PATH"] = os.pathsep.join(
        p for p in environment["PATH"].split(os.pathsep) if not p.startswith(str(REPOSITORY))
    )
    # pyop-kit is not on the index yet: pip finds the wheel just built, and everything else on the index.
    environment["PIP_FIND_LINKS"] = str(distributions.folder)
    environment["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    run = subprocess.run(
        ["bash", "-c", script_for(GETTING_STARTED)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    steps = [line for line in run.stdout.splitlines() if line.startswith("== ")]
    assert run.returncode == 0, f"failed after {steps[-1:]}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    assert any("make test" in block.text for block in blocks(GETTING_STARTED.read_text()) if block.language == "sh")
    installed = subprocess.run(
        [str(tmp_path / ".venv" / "bin" / "python"), "-m", "pip", "show", "--files", "pyop-kit"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "Editable project location" not in installed  # the wheel, as a stranger gets it


def test_the_script_runs_sh_blocks_and_honours_directives() -> None:
    markdown = (
        "```sh\necho one\n```\n\n<!-- tutorial: skip (needs a cluster) -->\n```sh\nkubectl apply\n```\n"
        "<!-- tutorial: write a.yaml -->\n```yaml\nk: v\n```\n```python\nprint('prose only')\n```\n"
    )
    text = script(markdown, "t.md")
    assert "echo one" in text and "kubectl apply" not in text and "prose only" not in text
    assert "cat > a.yaml <<'PYOP_TUTORIAL_EOF'\nk: v\nPYOP_TUTORIAL_EOF" in text
    with pytest.raises(ValueError, match="t.md:2: unknown tutorial directive 'run twice'"):
        script("<!-- tutorial: run twice -->\n```sh\ntrue\n```\n", "t.md")


def test_replace_class_swaps_only_that_class(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import x\n\n\n# marker\nclass A:\n    a = 1\n\n\nclass B:\n    b = 2\n")
    markdown = "<!-- tutorial: replace class A in m.py -->\n```python\nclass A:\n    a = 3\n```\n"
    subprocess.run(["bash", "-c", script(markdown, "t.md")], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "m.py").read_text() == "import x\n\n\n# marker\nclass A:\n    a = 3\n\n\nclass B:\n    b = 2\n"
