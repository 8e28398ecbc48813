"""docs/apiservers.md's example, run command by command as a reader would (as tests/tutorials runs the tutorials),
ending with the generated project's own `make lint` and `make test`, whose tests check what the page promises."""

from __future__ import annotations

import subprocess
from pathlib import Path

from distributions.tutorial import blocks, script_for
from tutorials.environment import REPOSITORY, checkout_environment

CHAPTER = REPOSITORY / "docs" / "apiservers.md"


def test_every_command_of_the_example_runs(tmp_path: Path, index: None) -> None:
    """`index`: the project's `pip install -e` builds it in an isolated environment, with setuptools from the index."""
    environment = checkout_environment(tmp_path / "venv")
    work = tmp_path / "work"
    work.mkdir()
    run = subprocess.run(
        ["bash", "-c", script_for(CHAPTER)],
        cwd=work, env=environment, capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip
    steps = [line for line in run.stdout.splitlines() if line.startswith("== ")]
    assert run.returncode == 0, f"failed after {steps[-1:]}:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    commands = "\n".join(block.text for block in blocks(CHAPTER.read_text()) if block.language == "sh")
    assert "pyop create apiserver" in commands and "make lint" in commands and "make test" in commands
    assert " passed" in run.stdout and " failed" not in run.stdout
    project = work / "library-operator"
    tests = sorted(p.name for p in (project / "tests").glob("test_*.py"))
    assert tests == ["test_apiserver_library_v1alpha1_book.py", "test_library_rules.py", "test_samples.py"]


def test_the_chapter_is_linked_from_the_readme_and_the_command_reference() -> None:
    assert "docs/apiservers.md" in (REPOSITORY / "README.md").read_text(encoding="utf-8")
    reference = (REPOSITORY / "docs" / "commands" / "create-apiserver.md").read_text(encoding="utf-8")
    assert "](../apiservers.md)" in reference
