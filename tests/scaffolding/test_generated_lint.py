"""A generated project stays clean for its own linter (`make lint` runs `ruff check .`) whatever order its APIs
and webhooks are added in: each command puts its import where isort's order (ruff's `I` rules) wants it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _ok(result) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.stdout + result.stderr


def _ruff(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=root, capture_output=True, text=True)


def test_apis_and_webhooks_added_out_of_alphabetical_order_keep_the_project_lint_clean(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "zoo-operator"
    root.mkdir()
    _ok(pyop("init", "--domain", "example.com", cwd=root))
    for kind in ("Zebra", "Ant", "Mole"):
        _ok(pyop("create", "api", "--group", "zoo", "--version", "v1", "--kind", kind, cwd=root))
        lint = _ruff(root)
        assert lint.returncode == 0, f"after create api {kind}:\n{lint.stdout}{lint.stderr}"
    _ok(pyop("create", "webhook", "--group", "zoo", "--version", "v1", "--kind", "Mole", "--defaulting", cwd=root))
    _ok(pyop("create", "webhook", "--group", "zoo", "--version", "v1", "--kind", "Ant", "--defaulting", cwd=root))
    lint = _ruff(root)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    main = (root / "zoo_operator/main.py").read_text()
    imports = [line for line in main.splitlines() if line.startswith("from zoo_operator.")]
    assert imports == sorted(imports, key=str.lower) and len(imports) == 5


def test_conversion_webhook_whose_hub_sorts_after_its_spokes_keeps_the_project_lint_clean(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "fleet-operator"
    root.mkdir()
    _ok(pyop("init", "--domain", "example.com", cwd=root))
    for version in ("v1", "v2", "v10"):
        _ok(pyop("create", "api", "--group", "crew", "--version", version, "--kind", "Captain", cwd=root))
    _ok(
        pyop(
            "create", "webhook", "--group", "crew", "--version", "v2", "--kind", "Captain", "--conversion",
            "--spoke", "v10,v1", cwd=root,
        )
    )  # fmt: skip
    lint = _ruff(root)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    webhook = (root / "fleet_operator/webhook/v2/captain_webhook.py").read_text()
    assert (
        "from fleet_operator.api.v1.captain_types import Captain as CaptainV1\n"
        "from fleet_operator.api.v2.captain_types import Captain\n"
        "from fleet_operator.api.v10.captain_types import Captain as CaptainV10\n"
    ) in webhook
