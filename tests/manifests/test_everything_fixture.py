"""The fixture project that uses every marker and type: the generated CRDs equal the hand-written goldens.

tests/manifests/fixtures/everything is a small pyop project (PROJECT, package, four API version packages, a skipped
package, controller and webhook markers, samples). expected/ holds the CRDs, role and webhook manifests written by
hand from the marker semantics. A golden's `{$builtin: <definition>}` node stands for Kubernetes' own schema of
that type from the pinned source (tested against controller-gen's goldens in tests/manifests/builtin); sibling keys
override.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from manifests_helpers import LOADER, generate, kustomize, pyop, snapshot

from pyop_scaffold import __version__
from pyop_scaffold.manifests.builtin import builtin_schema

FIXTURE = Path(__file__).parent / "fixtures" / "everything"
EXPECTED = FIXTURE / "expected"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("everything") / "everything-op"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("expected", "__pycache__"))
    generate(root, "--check")
    return root


def _expand(node: Any) -> Any:
    if isinstance(node, dict):
        if "$builtin" in node:
            schema = builtin_schema(node["$builtin"], embedded_object_meta=True)
            schema.update({key: _expand(value) for key, value in node.items() if key != "$builtin"})
            return schema
        return {key: _expand(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_expand(item) for item in node]
    return __version__ if node == "GENERATOR_VERSION" else node


def _header(text: str) -> list[str]:
    return text.split("---\n", 1)[0].splitlines()


@pytest.mark.parametrize(
    ("written", "golden"),
    [
        ("config/crd/bases/fleet.example.com_ships.yaml", "fleet.example.com_ships.yaml"),
        ("config/crd/bases/fleet.example.com_harbors.yaml", "fleet.example.com_harbors.yaml"),
        ("config/rbac/role.yaml", "role.yaml"),
        ("config/webhook/manifests.yaml", "manifests.yaml"),
    ],
)
def test_generated_manifests_equal_the_hand_written_goldens(generated: Path, written: str, golden: str) -> None:
    expected_text = (EXPECTED / golden).read_text()
    actual_text = (generated / written).read_text()
    assert _header(actual_text) == _header(expected_text)  # headerFile from PROJECT, `# `-prefixed
    expected = [_expand(document) for document in yaml.load_all(expected_text, Loader=LOADER)]
    actual = list(yaml.load_all(actual_text, Loader=LOADER))
    assert actual == expected


def test_the_webhook_manifests_are_byte_for_byte_the_golden(generated: Path) -> None:
    """No `$builtin` nodes there: the golden is the exact text controller-gen writes for the same markers."""
    assert (generated / "config/webhook/manifests.yaml").read_text() == (EXPECTED / "manifests.yaml").read_text()


def test_only_the_kinds_of_api_packages_become_crds(generated: Path) -> None:
    # internal/ is +kubebuilder:skip, v2alpha1's Ship is +kubebuilder:skipversion, legacy/ declares its group and
    # version with +groupName/+versionName only.
    bases = sorted(path.name for path in (generated / "config/crd/bases").iterdir())
    assert bases == ["fleet.example.com_harbors.yaml", "fleet.example.com_ships.yaml"]
    ships = yaml.load((generated / "config/crd/bases/fleet.example.com_ships.yaml").read_text(), Loader=LOADER)
    assert [v["name"] for v in ships["spec"]["versions"]] == ["v1", "v1beta1", "v1alpha1"]


def test_kustomize_builds_the_crds(generated: Path) -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    documents = kustomize(generated / "config/crd")
    assert sorted(d["metadata"]["name"] for d in documents) == ["harbors.fleet.example.com", "ships.fleet.example.com"]


def test_samples_of_every_kind_are_checked(generated: Path) -> None:
    result = pyop("make", "manifests", "--check", cwd=generated)
    assert result.exit_code == 0, result.stderr
    assert "checked 2 sample(s) against their CRDs: all valid" in result.stdout


def test_rerunning_rewrites_nothing(generated: Path) -> None:
    before = snapshot(generated)
    result = pyop("make", "manifests", cwd=generated)
    assert result.exit_code == 0, result.stderr
    assert snapshot(generated) == before
