"""Bad `pyop make clients` input: one line, exit code 2, the project exactly as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from clients_helpers import PACKAGE, pyop, tagged_project


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.parametrize(
    ("package", "message"),
    [
        ("", "invalid --package ''"),
        ("x\n", "invalid --package 'x\\n'"),
        ("../x", "must be a dotted Python module path inside the package 'harbor_op'"),
        ("\x00", "invalid --package"),
        ("other.clients", "inside the package 'harbor_op'"),
        (f"{PACKAGE}.class", "inside the package"),  # a keyword is no module name
        (PACKAGE, "pick a package of its own"),
    ],
)
def test_bad_package_is_refused(tmp_path: Path, package: str, message: str) -> None:
    root = tagged_project(tmp_path)
    before = _snapshot(root)
    result = pyop("make", "clients", "--package", package, cwd=root)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], result.stderr
    assert _snapshot(root) == before


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("clients: {package: ../evil}", "invalid clients.package '../evil'"),
        ("clients: [harbor_op.generated]", "clients must be a mapping with a package"),
    ],
)
def test_bad_project_setting_is_refused(tmp_path: Path, section: str, message: str) -> None:
    root = tagged_project(tmp_path)
    (root / "PROJECT").write_text((root / "PROJECT").read_text() + section + "\n")
    before = _snapshot(root)
    result = pyop("make", "clients", cwd=root)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert _snapshot(root) == before


def test_outside_a_project_is_refused(tmp_path: Path) -> None:
    result = pyop("make", "clients", cwd=tmp_path)
    assert result.exit_code == 2
    assert "no PROJECT file" in result.stderr
    assert list(tmp_path.iterdir()) == []
