"""`pyop make manifests --check-compat[=REF]`: breaking CRD changes refused in the API server's terms."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
from manifests.manifests_helpers import PACKAGE, crds, project, pyop, snapshot

from pyop_scaffold.manifests.compat import breaking_changes

SHIP = """
class Hull(enum.StrEnum):
    WOOD = "Wood"
    STEEL = "Steel"


class ShipSpec(KubeModel):
    # +kubebuilder:validation:Maximum=10
    crew: int = 1
    name: str = ""
    hull: Hull = Hull.WOOD
    tags: list[str] = []


# +kubebuilder:storageversion
class Ship(Resource, group_version=GROUP_VERSION):
    spec: ShipSpec = Field(default_factory=ShipSpec)
"""


def _crd(**spec_properties: Any) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": spec_properties}},
    }
    return {
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "ships.fleet.example.com"},
        "spec": {
            "scope": "Namespaced",
            "names": {"kind": "Ship"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


BASE = _crd(
    crew={"type": "integer", "maximum": 10},
    name={"type": "string"},
    hull={"type": "string", "enum": ["Steel", "Wood"]},
    tags={"type": "array", "items": {"type": "string"}},
)


def _changed(edit: Any) -> list[str]:
    new = copy.deepcopy(BASE)
    edit(new["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"], new)
    return breaking_changes({"ships.fleet.example.com": BASE}, {"ships.fleet.example.com": new})


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda s, c: s["properties"].pop("name"), ".spec.name: the field is removed"),
        (lambda s, c: s["properties"]["crew"].update(type="string"), ".spec.crew: type changed from integer to string"),
        (lambda s, c: s.update(required=["name"]), ".spec.name: newly required with no default"),
        (lambda s, c: s["properties"]["crew"].update(maximum=5), ".spec.crew: maximum lowered from 10 to 5"),
        (lambda s, c: s["properties"]["name"].update(maxLength=3), ".spec.name: maxLength lowered from none to 3"),
        (lambda s, c: s["properties"]["hull"].update(enum=["Steel"]), '.spec.hull: enum values removed: ["Wood"]'),
        (lambda s, c: s["properties"]["name"].update(pattern="^a"), '.spec.name: pattern changed from null to "^a"'),
        (
            lambda s, c: s["properties"]["tags"].update({"x-kubernetes-list-type": "map"}),
            ".spec.tags: x-kubernetes-list-type changed from unset to map",
        ),
        (
            lambda s, c: s.update({"x-kubernetes-validations": [{"rule": "self.crew > 1"}]}),
            '.spec: new validation rule "self.crew > 1"',
        ),
        (lambda s, c: c["spec"]["versions"][0].update(served=False), "v1: no longer served"),
        (lambda s, c: c["spec"].update(scope="Cluster"), "scope changed from Namespaced to Cluster"),
    ],
)
def test_each_breaking_change_is_one_line_in_the_api_servers_terms(edit: Any, expected: str) -> None:
    found = _changed(edit)
    assert len(found) == 1 and expected in found[0], found


@pytest.mark.parametrize(
    "edit",
    [
        lambda s, c: s["properties"].update(size={"type": "integer"}),  # a new optional field
        lambda s, c: s["properties"]["crew"].update(maximum=20),  # a wider bound
        lambda s, c: s["properties"]["hull"].update(enum=["Iron", "Steel", "Wood"]),  # a new enum value
        lambda s, c: s.update(required=["name"]) or s["properties"]["name"].update(default="x"),  # with a default
        lambda s, c: s["properties"]["crew"].update(description="Crew size."),
    ],
)
def test_compatible_changes_are_not_reported(edit: Any) -> None:
    assert _changed(edit) == []


def test_versions_storage_and_removed_crds() -> None:
    two = copy.deepcopy(BASE)
    v2 = copy.deepcopy(two["spec"]["versions"][0])
    v2["name"], v2["storage"] = "v2", False
    two["spec"]["versions"].append(v2)
    moved = copy.deepcopy(two)
    moved["spec"]["versions"][0]["storage"], moved["spec"]["versions"][1]["storage"] = False, True
    found = breaking_changes({"s": two}, {"s": moved})
    assert found == [
        "s: storage version changed from v1 to v2 (objects stay stored as v1 until a storage migration rewrites "
        "them; keep v1 served until then)"
    ]
    dropped = copy.deepcopy(moved)
    dropped["spec"]["versions"] = dropped["spec"]["versions"][1:]
    assert "s v1: the storage version is removed" in breaking_changes({"s": two}, {"s": dropped})[0]
    assert breaking_changes({"s": two}, {}) == ["s: the CRD is removed (every stored object and client of it)"]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_the_gate_compares_with_the_last_commit_and_writes_nothing_on_a_break(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"v1/ship_types.py": SHIP})
    assert pyop("make", "manifests", cwd=root).exit_code == 0
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "v1")
    ok = pyop("make", "manifests", "--check-compat", cwd=root)
    assert ok.exit_code == 0, ok.stderr
    assert "no breaking change against config/crd/bases at HEAD (1 CRD(s) compared)" in ok.stdout
    types = root / PACKAGE / "api" / "v1" / "ship_types.py"
    types.write_text(types.read_text().replace("Maximum=10", "Maximum=5").replace('    name: str = ""\n', ""))
    before = snapshot(root)
    broken = pyop("make", "manifests", "--check-compat", cwd=root)
    assert broken.exit_code == 2
    lines = broken.stderr.strip().splitlines()
    assert any("ships.fleet.example.com v1: .spec.crew: maximum lowered from 10 to 5" in line for line in lines)
    assert any(".spec.name: the field is removed" in line for line in lines)
    assert snapshot(root) == before  # nothing written
    # Against a folder (a released copy): the same verdict; a ref that is neither is one line, exit 2.
    released = tmp_path / "released"
    released.mkdir()
    for name, crd_text in ((n, (root / "config/crd/bases" / n).read_text()) for n in crds(root)):
        (released / name).write_text(crd_text)
    assert pyop("make", "manifests", f"--check-compat={released}", cwd=root).exit_code == 2
    missing = pyop("make", "manifests", "--check-compat=no-such-ref", cwd=root)
    assert missing.exit_code == 2 and "'no-such-ref'" in missing.stderr
    assert pyop("make", "manifests", cwd=root).exit_code == 0  # without the gate the change is written
