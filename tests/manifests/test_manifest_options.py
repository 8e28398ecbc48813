"""Generator options, from PROJECT's `manifests:` section or flags: maxDescLen, headerFile, embedded ObjectMeta."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from manifests_helpers import fails, generate, project, pyop, spec_of, version_schema

from pyop_scaffold.manifests.crd.assemble import truncate_description

SHIP = """
class ShipSpec(KubeModel):
    \"\"\"ShipSpec is the desired state of a ship. It says what the captain wants.\"\"\"

    # callsign identifies the ship on the radio, spelled with capitals and digits only
    callsign: str
    # template is the pod that runs on board.
    template: PodTemplateSpec | None = None
    # bridge is the metadata of the bridge.
    bridge: ObjectMeta | None = None


# +kubebuilder:object:root=true
class Ship(Resource, group_version=GROUP_VERSION):
    \"\"\"Ship is a vessel.\"\"\"

    spec: ShipSpec
"""


def _descriptions(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("description"), str):
            found.append(node["description"])
        for key, value in node.items():
            if key not in ("default", "example", "enum"):
                found.extend(_descriptions(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_descriptions(item))
    return found


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("Short.", 10, "Short."),
        ("First sentence. Second sentence is long.", 20, "First sentence."),
        ("no sentence end here at all", 12, "no sentence..."),
        ("abcdefghijklmnop", 5, "abcde..."),
        ("Ends exactly.", 13, "Ends exactly."),
    ],
)
def test_truncation_cuts_at_a_sentence_then_a_word_as_controller_gen(text: str, limit: int, expected: str) -> None:
    assert truncate_description(text, limit) == expected


def test_max_desc_len_from_project(tmp_path: Path) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": SHIP}, manifests={"maxDescLen": 30})
    crd = generate(root)["fleet.example.com_ships.yaml"]
    spec = spec_of(crd)
    assert spec["description"] == "ShipSpec is the desired state of a ship."[:30].rsplit(" ", 1)[0] + "..."
    assert spec["properties"]["callsign"]["description"] == "callsign identifies the ship..."
    assert spec["properties"]["template"]["description"] == "template is the pod that runs..."
    assert all(len(text) <= 33 for text in _descriptions(version_schema(crd)))


def test_max_desc_len_zero_drops_every_description_and_the_flag_wins(tmp_path: Path) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": SHIP}, manifests={"maxDescLen": 30})
    crd = generate(root, "--max-desc-len", "0")["fleet.example.com_ships.yaml"]
    assert _descriptions(version_schema(crd)) == []
    # the embedded PodTemplateSpec (Kubernetes' descriptions) is the bulk of the CRD
    full = generate(project(tmp_path / "full", {"v1/ship_types.py": SHIP}))["fleet.example.com_ships.yaml"]
    assert len(str(crd)) * 3 < len(str(full))


def test_bad_option_values(tmp_path: Path) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": SHIP}, manifests={"maxDescLen": "short"})
    assert "PROJECT: manifests.maxDescLen must be an integer, not 'short'" in fails(root)
    root = project(tmp_path / "unknown", {"v1/ship_types.py": SHIP}, manifests={"maxDesclen": 10})
    assert "PROJECT: unknown manifests option(s) maxDesclen" in fails(root)
    root = project(tmp_path / "flag", {"v1/ship_types.py": SHIP})
    result = pyop("make", "manifests", "--max-desc-len", "-1", cwd=root)
    assert result.exit_code == 2 and "--max-desc-len" in result.stderr and "greater than or equal to 0" in result.stderr


def test_header_file_from_project_or_flag(tmp_path: Path) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": SHIP}, manifests={"headerFile": "hack/boilerplate.txt"})
    (root / "hack").mkdir()
    (root / "hack/boilerplate.txt").write_text("Copyright 2025 Fleet.\n\n# already a comment\n")
    generate(root)
    for path in ("config/crd/bases/fleet.example.com_ships.yaml", "config/rbac/role.yaml"):
        text = (root / path).read_text()
        assert text.startswith("# Copyright 2025 Fleet.\n#\n# already a comment\n---\n"), path
    (root / "other.txt").write_text("Other header.\n")
    generate(root, "--header-file", str(root / "other.txt"))
    assert (root / "config/rbac/role.yaml").read_text().startswith("# Other header.\n---\n")


def test_a_missing_header_file_is_an_error(tmp_path: Path) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": SHIP}, manifests={"headerFile": "hack/missing.txt"})
    assert "header file hack/missing.txt: No such file or directory" in fails(root)


def test_embedded_object_meta_is_an_opaque_object_unless_asked(tmp_path: Path) -> None:
    plain = spec_of(generate(project(tmp_path / "plain", {"v1/ship_types.py": SHIP}))["fleet.example.com_ships.yaml"])
    assert plain["properties"]["bridge"] == {"type": "object", "description": "bridge is the metadata of the bridge."}
    assert plain["properties"]["template"]["properties"]["metadata"] == {
        "type": "object",
        "description": plain["properties"]["template"]["properties"]["metadata"]["description"],
    }
    root = project(tmp_path / "embedded", {"v1/ship_types.py": SHIP}, manifests={"generateEmbeddedObjectMeta": True})
    spec = spec_of(generate(root)["fleet.example.com_ships.yaml"])
    bridge = spec["properties"]["bridge"]
    assert sorted(bridge["properties"]) == ["annotations", "finalizers", "labels", "name", "namespace"]
    template_meta = spec["properties"]["template"]["properties"]["metadata"]
    assert template_meta["properties"]["labels"] == {"type": "object", "additionalProperties": {"type": "string"}}
