"""`create webhook` adding to a kind's webhooks, in both orders (admission then conversion, conversion then
admission), keeps every edit the user made to the webhook module and its test; only --force rewrites them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")
MODULE = "fleet/webhook/v1/captain_webhook.py"
TEST = "tests/test_crew_captain_v1_webhook.py"

MODULE_EDITS = [
    # (the scaffold's line, the user's replacement)
    (
        "        # TODO(user): fill in your defaulting logic: change `obj` in place.\n",
        '        obj.metadata.labels = {**(obj.metadata.labels or {}), "crew": "mine"}\n',
    ),
    ("import logging\n", "import logging\nimport os\n"),
]
USER_HELPER = '\n\ndef _mine() -> str:\n    """The user\'s own helper."""\n    return os.sep\n'
USER_TEST = '\n\ndef test_mine() -> None:\n    """The user\'s own test."""\n    assert sample().metadata.name\n'


def _ok(result) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.stdout + result.stderr


def _project(root: Path, pyop) -> Path:  # type: ignore[no-untyped-def]
    root.mkdir()
    _ok(pyop("init", "--domain", "example.com", "--project-name", "fleet", cwd=root))
    for version in ("v1", "v2"):
        _ok(pyop("create", "api", "--group", "crew", "--version", version, "--kind", "Captain", cwd=root))
    return root


def _edit(root: Path, *, defaulting: bool) -> None:
    module = root / MODULE
    text = module.read_text()
    for old, new in MODULE_EDITS:
        if old in text:
            text = text.replace(old, new, 1)
    module.write_text(text + USER_HELPER)
    with (root / TEST).open("a") as handle:
        handle.write(USER_TEST)
    if defaulting:
        assert '"crew": "mine"' in module.read_text()


def _check_kept(root: Path) -> None:
    module = (root / MODULE).read_text()
    assert "import os\n" in module and USER_HELPER in module
    assert "def test_mine() -> None:" in (root / TEST).read_text()


def _lint(root: Path) -> None:
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "E4,E7,E9,F,I", "."],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_conversion_added_to_admission_webhooks_keeps_the_users_code(tmp_path: Path, pyop, project_pytest) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "fleet", pyop)
    _ok(pyop("create", "webhook", *CAPTAIN, "--defaulting", "--programmatic-validation", cwd=root))
    _edit(root, defaulting=True)
    added = pyop("create", "webhook", *CAPTAIN, "--conversion", "--spoke", "v2", cwd=root)
    _ok(added)
    assert f"updated  {MODULE}" in added.stdout and f"updated  {TEST}" in added.stdout
    _check_kept(root)
    module = (root / MODULE).read_text()
    assert '"crew": "mine"' in module
    assert ".with_conversion(hub=Captain, spokes=[CaptainV2])" in module
    assert "from fleet.api.v2.captain_types import Captain as CaptainV2\n" in module
    test = (root / TEST).read_text()
    assert "def test_v2_round_trips_through_the_hub() -> None:" in test
    # A test function left as scaffolded is brought up to date: the paths it expects include /convert now.
    assert '        "/validate-crew-example-com-v1-captain",\n        "/convert",\n    }' in test
    _ok(pyop("make", "manifests", cwd=root))
    _lint(root)
    result = project_pytest(root, "-rA")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"PASSED {TEST}::test_v2_round_trips_through_the_hub" in result.stdout
    assert f"PASSED {TEST}::test_mine" in result.stdout


def test_admission_added_to_a_conversion_webhook_keeps_the_users_code(tmp_path: Path, pyop, project_pytest) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "fleet", pyop)
    _ok(pyop("create", "webhook", *CAPTAIN, "--conversion", "--spoke", "v2", cwd=root))
    _edit(root, defaulting=False)
    _ok(pyop("create", "webhook", *CAPTAIN, "--defaulting", cwd=root))
    _ok(pyop("create", "webhook", *CAPTAIN, "--programmatic-validation", cwd=root))
    _check_kept(root)
    module = (root / MODULE).read_text()
    assert "class CaptainDefaulter:" in module and "class CaptainValidator:" in module
    assert module.count(".with_conversion(") == 1
    assert module.index("class CaptainValidator:") < module.index("def setup_captain_webhook(")
    test = (root / TEST).read_text()
    assert (
        "from fleet.webhook.v1.captain_webhook import CaptainDefaulter, CaptainValidator, setup_captain_webhook\n"
        in test
    )
    assert test.count("def test_setup_serves_the_paths_of_the_markers(") == 1
    _ok(pyop("make", "manifests", cwd=root))
    _lint(root)
    result = project_pytest(root, "-rA")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in (
        "test_the_api_server_calls_the_webhooks_when_the_sample_is_created",
        "test_defaulting_keeps_the_sample_a_valid_captain",
        "test_validation_accepts_the_sample",
        "test_v2_round_trips_through_the_hub",
        "test_mine",
    ):
        assert f"PASSED {TEST}::{name}" in result.stdout


def test_a_module_that_cannot_take_the_addition_names_the_file_force_rewrites(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "fleet", pyop)
    _ok(pyop("create", "webhook", *CAPTAIN, "--defaulting", cwd=root))
    module = root / MODULE
    module.write_text(module.read_text().replace("        .complete()\n", "        .complete(  )\n"))
    before = tree(root)
    refused = pyop("create", "webhook", *CAPTAIN, "--programmatic-validation", cwd=root)
    assert refused.exit_code == 2
    assert refused.stderr.strip() == (
        f"Error: cannot add to {MODULE}: setup_captain_webhook() has no `.complete()` line to put "
        f".with_validator(CaptainValidator()) above; or pass --force to rewrite {MODULE} whole with the validation "
        "webhook (your changes to it are overwritten)"
    )
    assert tree(root) == before
    forced = pyop("create", "webhook", *CAPTAIN, "--programmatic-validation", "--force", cwd=root)
    _ok(forced)
    assert f"overwrote  {MODULE}" in forced.stdout
    assert "        .complete()\n" in module.read_text() and "class CaptainDefaulter:" in module.read_text()


@pytest.mark.parametrize("order", ["defaulting-first", "validation-first"])
def test_rerun_after_an_addition_writes_nothing(tmp_path: Path, pyop, tree, order: str) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "fleet", pyop)
    flags = ["--defaulting", "--programmatic-validation"]
    for flag in flags if order == "defaulting-first" else flags[::-1]:
        _ok(pyop("create", "webhook", *CAPTAIN, flag, cwd=root))
    before = tree(root)
    again = pyop("create", "webhook", *CAPTAIN, "--defaulting", cwd=root)
    assert again.exit_code == 2 and "already exists: pass --force" in again.stderr
    assert tree(root) == before


USER_MODULE = '''"""Mine."""

from __future__ import annotations

from op.webhook.v1.captain_webhook import CaptainDefaulter, setup_captain_webhook

X = 1


def setup() -> None:
    (
        builder()
        .with_defaulter(CaptainDefaulter())
        .complete()
    )
'''

RENDERED_MODULE = '''"""Theirs."""

from __future__ import annotations

import pytest

from op.webhook.v1.captain_webhook import (
    CaptainDefaulter,
    CaptainValidatorWithAVeryLongNameIndeed,
    CaptainValidatorWithAnotherLongName,
    setup_captain_webhook,
)

X = 1
Y = 2


def added_before_setup() -> None:
    pass


def setup() -> None:
    (
        builder()
        .with_defaulter(CaptainDefaulter())
        .with_validator(CaptainValidatorWithAVeryLongNameIndeed())
        .complete()
    )
'''


def test_merge_adds_only_what_is_missing_and_is_idempotent() -> None:
    from pyop_scaffold.edit.module_merge import merge_module

    merged = merge_module(USER_MODULE, RENDERED_MODULE, source="m.py", first_party="op", chain_function="setup")
    assert merged.startswith('"""Mine."""\n')
    assert "\nimport pytest\n\nfrom op.webhook.v1.captain_webhook import (\n    CaptainDefaulter,\n" in merged
    assert "    CaptainValidatorWithAnotherLongName,\n    setup_captain_webhook,\n)\n" in merged
    assert "X = 1\nY = 2\n\n\ndef added_before_setup() -> None:\n    pass\n\n\ndef setup() -> None:" in merged
    assert merged.count(".with_validator(") == 1 and merged.index(".with_validator(") < merged.index(".complete()")
    compile(merged, "m.py", "exec")
    assert merge_module(merged, RENDERED_MODULE, source="m.py", first_party="op", chain_function="setup") == merged


def test_merge_refreshes_definitions_the_user_left_alone_only() -> None:
    from pyop_scaffold.edit.module_merge import merge_module

    base = "def a() -> int:\n    return 1\n\n\ndef b() -> int:\n    return 1\n"
    rendered = "def a() -> int:\n    return 2\n\n\ndef b() -> int:\n    return 2\n"
    user = "def a() -> int:\n    return 1\n\n\ndef b() -> int:\n    return 42  # mine\n"
    merged = merge_module(user, rendered, source="m.py", first_party="op", base=base)
    assert merged == "def a() -> int:\n    return 2\n\n\ndef b() -> int:\n    return 42  # mine\n"
