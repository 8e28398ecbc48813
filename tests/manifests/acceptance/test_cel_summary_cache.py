"""CEL parse summaries kept on disk: a later run checks rules exactly as a fresh parse would, without cel-python."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pyop_scaffold.manifests.acceptance import cel_rules, cel_summary
from pyop_scaffold.manifests.acceptance.cel_rules import Placement

RULES: list[dict[str, Any]] = [
    {"rule": "self.minReplicas <= self.replicas"},
    {"rule": "self.replicas >"},  # syntax error
    {"rule": "self.replicas > limit"},  # undeclared reference
    {"rule": "has(self)"},  # has() of no field selection
    {"rule": "self.missing.deeper == 1"},  # undefined field
    {"rule": "self.all(x, x.size() > 0) || self.metadata.name == 'x'"},
    {"rule": "oldSelf.replicas == self.replicas", "optionalOldSelf": True},
    {"rule": "self.replicas > 0", "optionalOldSelf": True},  # optionalOldSelf without oldSelf
    {"rule": "self.replicas > 0", "messageExpression": "'too few: ' + string(self.nope)"},
    {"rule": "self.replicas > 0", "messageExpression": "'bad' +"},
]
NODE: dict[str, Any] = {
    "type": "object",
    "properties": {"replicas": {"type": "integer"}, "minReplicas": {"type": "integer"}},
    "x-kubernetes-validations": RULES,
}


@pytest.fixture
def cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A private cache home, and no summaries remembered by this process yet."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(cel_rules, "_summaries", None)
    yield tmp_path / "cache" / "pyop" / "cel-summaries.json"
    cel_rules._summaries = None


def _errors(placement: Placement | None = None) -> list[str]:
    placement = placement or Placement(None, False)
    return [str(error) for error in cel_rules.compile_errors(NODE, "spec.x", placement)]


def _no_parsing(expression: str) -> cel_summary.Summary:
    raise AssertionError(f"parsed {expression!r} again")


def test_a_later_run_checks_from_the_cache_exactly_as_parsing_does(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = _errors() + _errors(Placement("spec.items", True))
    assert len(parsed) >= 8 and cache_home.is_file()
    monkeypatch.setattr(cel_rules, "_summaries", None)  # a new process
    monkeypatch.setattr(cel_rules, "_summarize", _no_parsing)
    assert _errors() + _errors(Placement("spec.items", True)) == parsed


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        json.dumps({"key": [0, []], "entries": {}}),
        json.dumps({"key": None, "entries": {"self.replicas >": [None, True, [], None, []]}}),
    ],
)
def test_a_foreign_or_stale_file_is_not_used(cache_home: Path, monkeypatch: pytest.MonkeyPatch, content: str) -> None:
    expected = _errors()
    monkeypatch.setattr(cel_rules, "_summaries", None)
    cache_home.write_text(content)
    assert _errors() == expected
    assert json.loads(cache_home.read_text())["entries"]  # replaced by this run's summaries


def test_entries_that_are_not_summaries_mean_parsing(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _errors()
    data = json.loads(cache_home.read_text())
    data["entries"]["self.replicas >"] = [None, True, [["self", "one", 0]], None, []]
    cache_home.write_text(json.dumps(data))
    monkeypatch.setattr(cel_rules, "_summaries", None)
    assert _errors() == expected


def test_an_edit_of_the_summarising_code_misses(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("a = 1\n")
    before = cel_summary.code_state([str(module)])
    module.write_text("a = 22\n")
    assert before is not None and cel_summary.code_state([str(module)]) != before


def test_a_cached_run_does_not_import_cel_python(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        from pyop_scaffold.manifests.acceptance import check_crd
        from tests.manifests.acceptance.acceptance_fixtures import base_crd

        crd = base_crd()
        spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        spec["x-kubernetes-validations"] = [{"rule": "self.nope > 1"}]
        print(len(check_crd(crd)), "celpy" in sys.modules)
        """
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    repository = Path(__file__).resolve().parents[3]
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=repository, timeout=120
        )
        for _ in range(2)
    ]
    assert [run.stdout.split() for run in runs] == [["1", "True"], ["1", "False"]], [run.stderr for run in runs]
