"""The tutorials under docs/tutorials, run command by command as a reader would, through the generated project's
own `make lint` and `make test` (whose tests check the behaviour the tutorial promises)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from distributions.tutorial import blocks, script, script_for

from tutorials.environment import REPOSITORY, checkout_environment

TUTORIALS = REPOSITORY / "docs" / "tutorials"


@pytest.mark.parametrize("name", ["cronjob.md", "memcached.md"])
def test_every_command_of_the_tutorial_runs(name: str, tmp_path: Path, index: None) -> None:
    """`index`: the project's `pip install -e` builds it in an isolated environment, with setuptools from the index."""
    tutorial = TUTORIALS / name
    environment = checkout_environment(tmp_path / "venv")
    work = tmp_path / "work"
    work.mkdir()
    run = subprocess.run(
        ["bash", "-c", script_for(tutorial)],
        cwd=work, env=environment, capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip
    steps = [line for line in run.stdout.splitlines() if line.startswith("== ")]
    assert run.returncode == 0, f"failed after {steps[-1:]}:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    commands = "\n".join(block.text for block in blocks(tutorial.read_text()) if block.language == "sh")
    assert "make lint" in commands and "make test" in commands
    assert " passed" in run.stdout and " failed" not in run.stdout  # the project's tests ran, and all passed


def test_the_tutorials_are_linked_from_getting_started_and_the_readme() -> None:
    for page in (REPOSITORY / "docs" / "getting-started.md", REPOSITORY / "README.md"):
        text = page.read_text(encoding="utf-8")
        assert "tutorials/cronjob.md" in text and "tutorials/memcached.md" in text, page


def test_append_shows_a_file_part_by_part(tmp_path: Path) -> None:
    markdown = (
        "<!-- tutorial: write m.py -->\n```python\nimport x\n```\n"
        "<!-- tutorial: append m.py -->\n```python\ndef f() -> None:\n    pass\n```\n"
    )
    subprocess.run(["bash", "-c", script(markdown, "t.md")], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "m.py").read_text() == "import x\n\n\ndef f() -> None:\n    pass\n"
