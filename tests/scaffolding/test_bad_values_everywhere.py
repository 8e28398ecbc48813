"""Every string option of every command given values no name may have: the answer is success or one line with exit
code 2 and the project as it was, never a traceback or click's three-line usage block.

The bad-input table (test_bad_input.py) says what each refusal reads; this sweep finds the options it forgot.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pyop_scaffold.cli.app import app

from .conftest import snapshot

VALUES = ["", "x\n", "../x", "\x00"]
CAPTAIN = {"--group": "crew", "--version": "v1", "--kind": "Captain"}
# (command, the options it needs and their good values, the options swept, flags it needs)
COMMANDS: list[tuple[tuple[str, ...], dict[str, str], tuple[str, ...], tuple[str, ...]]] = [
    (("init",), {}, ("--domain", "--project-name", "--owner", "--license"), ()),
    (("create", "api"), {**CAPTAIN, "--version": "v2"}, ("--group", "--version", "--kind", "--plural"), ()),
    (
        ("create", "webhook"),
        CAPTAIN,
        ("--group", "--version", "--kind", "--plural", "--defaulting-path"),
        ("--defaulting",),
    ),
    (("create", "webhook"), CAPTAIN, ("--spoke",), ("--conversion",)),
    (("edit",), {}, ("--license", "--owner", "--multigroup", "--namespaced"), ()),
    (("make", "manifests"), {}, ("--max-desc-len",), ()),
]
CASES = [
    pytest.param(command, {**needed, option: value}, flags, id=f"{' '.join(command)} {option}={value!r}")
    for command, needed, options, flags in COMMANDS
    for option in options
    for value in VALUES
]


@pytest.fixture(scope="module")
def captain_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("base") / "op"
    root.mkdir()
    runner = CliRunner()
    assert runner.invoke(app, ["init", "--domain", "example.com", "-C", str(root)]).exit_code == 0
    create = ["create", "api", *[part for item in CAPTAIN.items() for part in item], "-C", str(root)]
    assert runner.invoke(app, create).exit_code == 0
    return root


@pytest.mark.parametrize(("command", "options", "flags"), CASES)
def test_bad_value_is_one_line_or_accepted(
    tmp_path: Path, captain_project: Path, command: tuple[str, ...], options: dict[str, str], flags: tuple[str, ...]
) -> None:
    root = tmp_path / "op"
    if command == ("init",):
        root.mkdir()
    else:
        shutil.copytree(captain_project, root)
    args = [*command, *[part for item in options.items() for part in item], *flags, "-C", str(root)]
    before = snapshot(root)
    result = CliRunner().invoke(app, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code in (0, 2), result.stderr
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
        assert snapshot(root) == before
