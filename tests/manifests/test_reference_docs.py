"""`pyop make docs`: reference pages that say what the CRDs enforce, deterministic, linked from the README once."""

from __future__ import annotations

from pathlib import Path

from manifests.manifests_helpers import project, pyop

SHIP = '''
class Hull(enum.StrEnum):
    WOOD = "Wood"
    STEEL = "Steel"


class Engine(KubeModel):
    """Engine drives the ship."""

    # +kubebuilder:validation:Minimum=1
    # +kubebuilder:validation:Maximum=8
    cylinders: int = 4


class ShipSpec(KubeModel):
    """ShipSpec is what the ship should be."""

    # name | as painted on the hull.
    # +kubebuilder:validation:MaxLength=12
    # +kubebuilder:validation:Pattern=`^[a-z]+$`
    name: str
    hull: Hull = Hull.WOOD
    engines: list[Engine] = []
    labels: dict[str, str] = {}
    template: PodTemplateSpec | None = None


# +kubebuilder:printcolumn:name="Hull",type=string,JSONPath=`.spec.hull`
# +kubebuilder:resource:shortName=sh
# +kubebuilder:subresource:status
class Ship(Resource, group_version=GROUP_VERSION):
    """Ship is a vessel of the fleet."""

    spec: ShipSpec
'''


def test_pages_say_what_the_crd_enforces(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"v1/ship_types.py": SHIP})
    (root / "README.md").write_text("# shipyard\n\nMy words.\n")
    result = pyop("make", "docs", cwd=root)
    assert result.exit_code == 0, result.stderr
    page = (root / "docs/api/fleet.example.com_v1.md").read_text()
    assert "## Ship\n\nShip is a vessel of the fleet." in page
    assert "- Short names: `sh`" in page and "- Subresources: status" in page
    assert "| Hull | string | `.spec.hull` |" in page
    assert "| `spec` | [ShipSpec](#shipspec) | yes |" in page
    assert (
        "| `name` | string | yes |  | length <= 12; pattern `^[a-z]+$` | name \\| as painted on the hull. |" in page
    )
    assert '| `hull` | Hull (string) |  | `"Wood"` | one of `"Wood"`, `"Steel"` |' in page
    assert "| `engines` | [][Engine](#engine) |" in page and "| `labels` | map[string]string |" in page
    assert "### Engine\n\nEngine drives the ship." in page
    assert "| `cylinders` | integer |  | `4` | >= 1; <= 8 |" in page
    assert "[PodTemplateSpec](https://kubernetes.io/docs/reference/generated/kubernetes-api/v1.37/" in page
    assert "### PodTemplateSpec" not in page  # built-in types link to Kubernetes' reference
    index = (root / "docs/api/README.md").read_text()
    assert "- [fleet.example.com/v1](fleet.example.com_v1.md): [Ship](fleet.example.com_v1.md#ship)" in index
    readme = (root / "README.md").read_text()
    assert readme.startswith("# shipyard\n\nMy words.\n") and readme.count("docs/api/README.md") == 1


def test_a_second_run_is_byte_identical_and_leaves_the_readme_alone(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"v1/ship_types.py": SHIP})
    (root / "README.md").write_text("# shipyard\n")
    assert pyop("make", "docs", cwd=root).exit_code == 0
    first = {path: path.read_bytes() for path in sorted((root / "docs").rglob("*.md"))}
    readme = (root / "README.md").read_bytes()
    again = pyop("make", "docs", cwd=root)
    assert again.exit_code == 0 and "updated" not in again.stdout and "created" not in again.stdout
    assert {path: path.read_bytes() for path in sorted((root / "docs").rglob("*.md"))} == first
    assert (root / "README.md").read_bytes() == readme


def test_no_readme_is_not_made_one(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"v1/ship_types.py": SHIP})
    assert pyop("make", "docs", cwd=root).exit_code == 0
    assert not (root / "README.md").exists()
    assert (root / "docs/api/README.md").exists()
