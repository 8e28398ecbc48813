"""`make manifests` in a project with an aggregated API server: no CRD for the server's kinds (the server serves
them), while `--check` validates their samples against the schema the server builds from the same models."""

from __future__ import annotations

from pathlib import Path

from apiserver_scaffold.conftest import FLUNDER, ok

SAMPLE = "config/samples/wardle_v1alpha1_flunder.yaml"
TYPES = "wardle_operator/apiserver/wardle/v1alpha1/flunder_types.py"


def test_no_crd_for_the_servers_kinds(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    ok(pyop("create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", cwd=project))
    ok(pyop("make", "manifests", cwd=project))
    assert sorted(p.name for p in (project / "config/crd/bases").iterdir()) == ["crew.example.com_captains.yaml"]


def test_check_validates_the_servers_samples_against_their_models(project: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    result = ok(pyop("make", "manifests", "--check", cwd=project))
    assert "checked 1 sample(s)" in result.stdout

    sample = project / SAMPLE
    sample.write_text(sample.read_text().replace("  foo: bar\n", "  foo: bar\n  copies: 2\n"))
    before = tree(project)
    result = pyop("make", "manifests", "--check", cwd=project)
    assert result.exit_code == 2
    assert f"Error: {SAMPLE}:11: spec.copies: unknown field (the API server would drop it)" in result.stderr
    assert tree(project) == before

    types = project / TYPES
    types.write_text(
        types.read_text()
        .replace("from pyop.api import Condition,", "from pyop.api import Condition, Int32,")
        .replace(
            "    foo: str | None = None\n",
            "    foo: str | None = None\n\n    # +kubebuilder:validation:Minimum=3\n    copies: Int32 = 3\n",
        )
    )
    result = pyop("make", "manifests", "--check", cwd=project)
    assert result.exit_code == 2
    assert f"{SAMPLE}:11: spec.copies: Invalid value: 2: spec.copies in body should be greater than or equal to 3" in (
        result.stderr
    )
    sample.write_text(sample.read_text().replace("copies: 2", "copies: 4"))
    ok(pyop("make", "manifests", "--check", cwd=project))
