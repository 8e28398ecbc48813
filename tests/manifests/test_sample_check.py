"""`pyop make manifests --check`: broken samples are caught with the file and line, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from manifests_helpers import fails, generate, line_of, project, pyop

SHIP = """
    class Engine(KubeModel):
        power: Int32 = Field(ge=1)


    class ShipSpec(KubeModel):
        # +kubebuilder:validation:Pattern=`^[A-Z0-9]{3,7}$`
        callsign: str
        crew: Int32 = Field(10, ge=1, le=500)
        hull: Literal["Wood", "Steel"] = "Steel"
        # +listType=set
        tags: list[str] = []
        engines: list[Engine] = []


    # +kubebuilder:object:root=true
    class Ship(Resource, group_version=GROUP_VERSION):
        spec: ShipSpec
"""

GOOD = """\
apiVersion: fleet.example.com/v1
kind: Ship
metadata:
  name: sample
spec:
  callsign: PHDT7
  crew: 40
  hull: Wood
  tags: [fast, old]
  engines:
  - power: 300
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = project(tmp_path / "op", {"v1/ship_types.py": SHIP})
    (root / "config" / "samples").mkdir(parents=True)
    return root


def _sample(root: Path, text: str, name: str = "fleet_v1_ship.yaml") -> Path:
    path = root / "config" / "samples" / name
    path.write_text(text)
    return path


def test_a_valid_sample_passes_and_the_crd_is_written(root: Path) -> None:
    _sample(root, GOOD)
    (root / "config/samples/kustomization.yaml").write_text("resources:\n- fleet_v1_ship.yaml\n")
    crds = generate(root, "--check")
    assert list(crds) == ["fleet.example.com_ships.yaml"]


@pytest.mark.parametrize(
    ("change", "field_line", "message"),
    [
        (("crew: 40", "crew: forty"), "crew: forty", 'spec.crew: Invalid value: "string": spec.crew in body must be'),
        (("  callsign: PHDT7\n", ""), "spec:", "spec.callsign: Required value"),
        (("hull: Wood", "hull: Plastic"), "hull: Plastic", 'spec.hull: Unsupported value: "Plastic"'),
        (("crew: 40", "crew: 501"), "crew: 501", "spec.crew: Invalid value: 501: spec.crew in body should be less"),
        (("callsign: PHDT7", "callsign: ph"), "callsign: ph", 'spec.callsign: Invalid value: "ph": spec.callsign in'),
        (("crew: 40", "crew: 40\n  colour: red"), "colour: red", "spec.colour: unknown field"),
        (("tags: [fast, old]", "tags: [fast, fast]"), "tags:", 'spec.tags[1]: Duplicate value: "fast"'),
        (("  - power: 300", "  - power: 0"), "power: 0", "spec.engines[0].power: Invalid value: 0"),
    ],
    ids=["type", "required", "enum", "bounds", "pattern", "unknown-field", "set-duplicate", "nested-bounds"],
)
def test_a_broken_sample_is_caught_with_file_and_line(
    root: Path, change: tuple[str, str], field_line: str, message: str
) -> None:
    old, new = change
    assert old in GOOD
    path = _sample(root, GOOD.replace(old, new))
    stderr = fails(root, "--check")
    expected_prefix = f"config/samples/fleet_v1_ship.yaml:{line_of(path, field_line)}: "
    lines = [line.removeprefix("Error: ") for line in stderr.strip().splitlines()]
    assert any(line.startswith(expected_prefix) and message in line for line in lines), stderr
    assert not (root / "config/crd/bases").exists()  # nothing written, not even the valid CRD


def test_every_problem_of_every_sample_is_listed(root: Path) -> None:
    _sample(root, GOOD.replace("crew: 40", "crew: 0"), "a.yaml")
    _sample(root, GOOD.replace("hull: Wood", "hull: Tin"), "b.yaml")
    stderr = fails(root, "--check")
    assert "config/samples/a.yaml:" in stderr and "spec.crew" in stderr
    assert "config/samples/b.yaml:" in stderr and "spec.hull" in stderr


def test_defaults_apply_before_validation(root: Path) -> None:
    # crew and hull are omitted: the API server fills in their defaults, so the sample is valid.
    _sample(root, "apiVersion: fleet.example.com/v1\nkind: Ship\nmetadata:\n  name: s\nspec:\n  callsign: ABC\n")
    generate(root, "--check")


def test_a_version_the_crd_does_not_have_is_an_error(root: Path) -> None:
    _sample(root, GOOD.replace("fleet.example.com/v1", "fleet.example.com/v2"))
    stderr = fails(root, "--check")
    assert "config/samples/fleet_v1_ship.yaml:1: fleet.example.com/v2 is not a version of the Ship CRD" in stderr


def test_an_unknown_kind_of_the_projects_group_is_an_error_other_groups_are_skipped(root: Path) -> None:
    _sample(root, GOOD + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n")
    result = pyop("make", "manifests", "--check", cwd=root)
    assert result.exit_code == 0, result.stderr
    assert "checked 1 sample(s)" in result.stdout
    _sample(root, GOOD.replace("kind: Ship", "kind: Boat"))
    assert "kind Boat is not an API of group fleet.example.com" in fails(root, "--check")


def test_samples_are_not_checked_without_the_flag(root: Path) -> None:
    _sample(root, GOOD.replace("crew: 40", "crew: forty"))
    generate(root)


def test_a_sample_that_is_not_yaml_is_reported(root: Path) -> None:
    _sample(root, "spec: [unclosed\n")
    assert "config/samples/fleet_v1_ship.yaml: not valid YAML" in fails(root, "--check")
