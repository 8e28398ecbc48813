"""`pip install -e <checkout>`: type checkers see pyop in generated projects, and new modules need no re-install.

setuptools serves a renamed package (scaffold/ as pyop_scaffold) in an editable install through an import hook
that mypy cannot follow; tools/pyop_build_backend.py installs a plain path entry instead.
"""

from __future__ import annotations

import venv
from pathlib import Path

from distributions.environments import Environment, clean_copy


def test_an_editable_install_keeps_mypy_working_in_a_generated_project(index: None, tmp_path: Path) -> None:
    checkout = clean_copy(tmp_path / "checkout")
    environment = Environment(tmp_path / "venv")
    venv.create(environment.root, with_pip=True)
    environment.run(
        "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", f"{checkout}[cli]", "mypy",
        cwd=tmp_path,
    )  # fmt: skip
    project = tmp_path / "demo-operator"
    project.mkdir()
    environment.run("pyop", "init", "--domain", "example.com", cwd=project)
    checked = environment.run("python", "-m", "mypy", "demo_operator", cwd=project, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # A module added to the checkout after the install is importable at once (the entry names folders).
    (checkout / "pyop" / "added_after_install.py").write_text("VALUE = 42\n")
    imported = environment.run("python", "-c", "import pyop.added_after_install as m; print(m.VALUE)", cwd=tmp_path)
    assert imported.stdout.strip() == "42"
