"""Markers separated from the doc comment by one blank line still apply, as controller-gen reads them (the comment
group directly above and the one before it); two blank lines, or another indentation, detach them."""

from __future__ import annotations

from pathlib import Path

from manifests_helpers import generate, project, version_schema

from pyop_scaffold.manifests.markers.comments import read_source_docs

SOURCE = """\
# +kubebuilder:object:root=true
# +kubebuilder:subresource:status

# Ship is a ship.
class Ship:
    \"\"\"Docstring.\"\"\"

    # +kubebuilder:validation:MinLength=1

    # name is the name.
    name: str
    # +kubebuilder:validation:Minimum=1
    # (left at the end of the class)

class Other:
    # +kubebuilder:validation:MaxLength=3


    # two blank lines: not attached
    x: str

    # +kubebuilder:validation:Maximum=9

    y: int
"""


def test_markers_across_one_blank_line_attach_and_the_description_is_the_closest_group() -> None:
    docs = read_source_docs(SOURCE, "m.py", "m.py")
    ship = docs.for_class("Ship")
    assert [m.name for m in ship.markers] == ["kubebuilder:object:root", "kubebuilder:subresource:status"]
    assert ship.description == "Docstring."
    name = docs.for_field("Ship", "name")
    assert [(m.name, m.location.line) for m in name.markers] == [("kubebuilder:validation:MinLength", 8)]
    assert name.description == "name is the name."
    assert docs.for_class("Other").markers == ()  # the comment at the end of Ship is indented as Ship's body
    assert docs.for_field("Other", "x").markers == ()
    assert docs.for_field("Other", "x").description == "two blank lines: not attached"
    assert [m.value for m in docs.for_field("Other", "y").markers] == [9]


def test_kubebuilders_own_layout_keeps_the_root_markers(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {
            "v1/ship_types.py": """
class ShipSpec(KubeModel):
    # +kubebuilder:validation:Maximum=500

    # crew is how many sail the ship.
    crew: int = 10


class ShipStatus(KubeModel):
    ready: bool = False


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:resource:singular=vessel

# Ship is a vessel of the fleet.
class Ship(Resource, group_version=GROUP_VERSION):
    spec: ShipSpec
    status: ShipStatus | None = None
"""
        },
    )
    crd = generate(root)["fleet.example.com_ships.yaml"]
    version = crd["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}
    assert crd["spec"]["names"]["singular"] == "vessel"
    crew = version_schema(crd)["properties"]["spec"]["properties"]["crew"]
    assert crew["maximum"] == 500 and crew["description"] == "crew is how many sail the ship."
