"""Several API versions of a kind form one CRD: storage, served, deprecated, skipped, Kubernetes' version order;
names, scope and package-level markers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from manifests_helpers import fails, generate, kustomize, project

from pyop_scaffold.manifests.crd.versions import sort_versions


def _ship(markers: str = "", body: str = "spec: dict[str, str] = {}", keywords: str = "") -> str:
    return f"""
    {markers}
    class Ship(Resource, group_version=GROUP_VERSION{keywords}):
        \"\"\"Ship is a vessel.\"\"\"

        {body}
    """


def _marked(*markers: str) -> str:
    return "\n    ".join(f"# {m}" for m in ("+kubebuilder:object:root=true", *markers))


def test_versions_form_one_crd_in_kubernetes_order_with_flags(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {
            "v1alpha1/ship_types.py": _ship(_marked("+kubebuilder:unservedversion")),
            "v1beta1/ship_types.py": _ship(_marked('+kubebuilder:deprecatedversion:warning="use v1"')),
            "v1beta2/ship_types.py": _ship(_marked("+kubebuilder:deprecatedversion")),
            "v1/ship_types.py": _ship(_marked("+kubebuilder:storageversion")),
            "v2alpha1/ship_types.py": _ship(_marked("+kubebuilder:skipversion")),
            "v2/ship_types.py": _ship(_marked()),
        },
    )
    crd = generate(root)["fleet.example.com_ships.yaml"]
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v2", "v1", "v1beta2", "v1beta1", "v1alpha1"]
    assert [name for name, v in versions.items() if v["storage"]] == ["v1"]
    assert versions["v1alpha1"]["served"] is False and versions["v2"]["served"] is True
    assert versions["v1beta1"]["deprecated"] is True and versions["v1beta1"]["deprecationWarning"] == "use v1"
    assert versions["v1beta2"]["deprecated"] is True and "deprecationWarning" not in versions["v1beta2"]
    assert "deprecated" not in versions["v1"]
    if shutil.which("kubectl"):
        (root / "config/crd").mkdir(parents=True, exist_ok=True)
        (root / "config/crd/kustomization.yaml").write_text("resources:\n- bases/fleet.example.com_ships.yaml\n")
        assert [d["kind"] for d in kustomize(root / "config/crd")] == ["CustomResourceDefinition"]


def test_kubernetes_version_order() -> None:
    names = ["v1beta1", "v1", "v10", "v2alpha1", "v11alpha2", "foo1", "v1alpha1", "v2", "v1beta2", "foo10"]
    # GA by major descending, then beta, then alpha (each by major then minor descending), then the rest by name.
    assert sort_versions(names) == [
        "v10", "v2", "v1", "v1beta2", "v1beta1", "v11alpha2", "v2alpha1", "v1alpha1", "foo1", "foo10",
    ]  # fmt: skip


def test_a_single_version_is_the_storage_version(tmp_path: Path) -> None:
    root = project(tmp_path / "op", {"v1beta1/ship_types.py": _ship(_marked())})
    crd = generate(root)["fleet.example.com_ships.yaml"]
    assert crd["spec"]["versions"][0]["storage"] is True


def test_several_versions_need_exactly_one_storage_version(tmp_path: Path) -> None:
    modules = {"v1/ship_types.py": _ship(_marked()), "v2/ship_types.py": _ship(_marked())}
    root = project(tmp_path / "none", modules)
    assert "kind Ship has versions v2, v1 but no storage version: mark one with +kubebuilder:storageversion" in fails(
        root
    )
    modules = {k: _ship(_marked("+kubebuilder:storageversion")) for k in modules}
    root = project(tmp_path / "two", modules)
    stderr = fails(root)
    assert "ship_types.py:" in stderr and "kind Ship has several storage versions (v2, v1)" in stderr


def test_the_same_version_twice_is_an_error(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {"v1/ship_types.py": _ship(_marked()), "v1/other_types.py": _ship(_marked())},
    )
    assert "kind Ship version v1 is defined twice" in fails(root)


def test_every_version_skipped_means_no_crd(tmp_path: Path) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": _ship(_marked("+kubebuilder:skipversion"))})
    assert generate(root) == {}


def test_names_plural_singular_short_names_categories(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {
            "v1/policy_types.py": """
            # +kubebuilder:object:root=true
            # +kubebuilder:resource:singular=pol,shortName=po;pl,categories=all;fleet
            class Policy(Resource, group_version=GROUP_VERSION):
                spec: dict[str, str] = {}
            """,
            "v1/index_types.py": """
            # +kubebuilder:object:root=true
            # +kubebuilder:resource:path=indexes
            class Index(Resource, group_version=GROUP_VERSION, plural="indexes"):
                spec: dict[str, str] = {}
            """,
            "v1/person_types.py": """
            # +kubebuilder:object:root=true
            class Person(Resource, group_version=GROUP_VERSION):
                spec: dict[str, str] = {}
            """,
        },
    )
    crds = generate(root)
    assert sorted(crds) == [
        "fleet.example.com_indexes.yaml",
        "fleet.example.com_people.yaml",
        "fleet.example.com_policies.yaml",
    ]
    policy = crds["fleet.example.com_policies.yaml"]
    assert policy["metadata"]["name"] == "policies.fleet.example.com"
    assert policy["spec"]["names"] == {
        "kind": "Policy",
        "listKind": "PolicyList",
        "plural": "policies",
        "singular": "pol",
        "shortNames": ["po", "pl"],
        "categories": ["all", "fleet"],
    }
    assert crds["fleet.example.com_indexes.yaml"]["spec"]["names"]["plural"] == "indexes"
    assert crds["fleet.example.com_people.yaml"]["spec"]["names"]["singular"] == "person"


@pytest.mark.parametrize(
    ("marker", "keywords", "message"),
    [
        ("+kubebuilder:resource:path=ships", ', plural="vessels"', "+kubebuilder:resource:path=ships disagrees with"),
        ("+kubebuilder:resource:scope=Cluster", "", "scope=Cluster disagrees with namespaced=True"),
        ("+kubebuilder:resource:scope=Namespaced", ", namespaced=False", "scope=Namespaced disagrees with namespaced"),
        ("+kubebuilder:resource:scope=Global", "", "scope=Global is not Namespaced or Cluster"),
    ],
)
def test_resource_marker_and_class_keywords_must_agree(
    tmp_path: Path, marker: str, keywords: str, message: str
) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": _ship(_marked(marker), keywords=keywords)})
    assert message in fails(root)


def test_cluster_scope_from_the_class_keyword_or_the_marker(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {"v1/ship_types.py": _ship(_marked("+kubebuilder:resource:scope=Cluster"), keywords=", namespaced=False")},
    )
    assert generate(root)["fleet.example.com_ships.yaml"]["spec"]["scope"] == "Cluster"


def test_versions_must_agree_on_names(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {
            "v1/ship_types.py": _ship(_marked("+kubebuilder:storageversion", "+kubebuilder:resource:shortName=sh")),
            "v2/ship_types.py": _ship(_marked("+kubebuilder:resource:shortName=sp")),
        },
    )
    assert "versions disagree on shortNames (['sp'] vs ['sh'])" in fails(root)


def test_group_and_version_from_package_markers_only(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {
            "legacy/__init__.py": '"""Old API.\n\n+groupName=old.example.com\n+versionName=v1alpha1\n"""\n',
            "legacy/groupversion_info.py": '"""Nothing here."""\n',
            "legacy/ship_types.py": """
            #!raw
            from pyop.api import Resource


            # +kubebuilder:object:root=true
            class Ship(Resource):
                spec: dict[str, str] = {}
            """,
        },
    )
    crd = generate(root)["old.example.com_ships.yaml"]
    assert crd["spec"]["group"] == "old.example.com"
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1alpha1"]


def test_a_root_without_any_group_is_an_error(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {
            "v1/groupversion_info.py": '"""No group here."""\n',
            "v1/ship_types.py": "#!raw\nfrom pyop.api import Resource\n\n\n# +kubebuilder:object:root=true\n"
            "class Ship(Resource):\n    pass\n",
        },
    )
    assert "class Ship is marked +kubebuilder:object:root=true but has no group" in fails(root)


def test_package_markers_must_agree_with_the_group_version(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {
            "v1/groupversion_info.py": '"""Group.\n\n+groupName=other.example.com\n+versionName=v1\n"""\n\n'
            "from pyop.api import GroupVersion\n\n"
            'GROUP_VERSION = GroupVersion(group="fleet.example.com", version="v1")\n',
            "v1/ship_types.py": _ship(_marked()),
        },
    )
    stderr = fails(root)
    assert "groupversion_info.py:3: +groupName=other.example.com disagrees with group='fleet.example.com'" in stderr


def test_a_skipped_package_generates_nothing(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {
            "internal/__init__.py": '"""Not an API.\n\n+kubebuilder:skip\n"""\n',
            "internal/ship_types.py": _ship(_marked()),
            "v1/boat_types.py": """
            # +kubebuilder:object:root=true
            class Boat(Resource, group_version=GROUP_VERSION):
                spec: dict[str, str] = {}
            """,
        },
    )
    assert list(generate(root)) == ["fleet.example.com_boats.yaml"]


def test_a_root_marker_on_a_plain_model_is_an_error(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {"v1/ship_types.py": "# +kubebuilder:object:root=true\nclass Ship(KubeModel):\n    name: str\n"},
    )
    assert "class Ship is marked +kubebuilder:object:root=true but is not a pyop.api.Resource" in fails(root)


def test_package_wide_optional_and_required(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {
            "v1/__init__.py": '"""v1.\n\n+kubebuilder:validation:Optional\n"""\n',
            "v1/ship_types.py": """
            class ShipSpec(KubeModel):
                name: str
                # +kubebuilder:validation:Required
                crew: int = 1
                # +required
                hull: str
            # +kubebuilder:object:root=true
            class Ship(Resource, group_version=GROUP_VERSION):
                spec: ShipSpec
            """,
            "v2/__init__.py": '"""v2.\n\n+kubebuilder:validation:Required\n"""\n',
            "v2/ship_types.py": """
            class ShipSpec(KubeModel):
                name: str
                # +optional
                hull: str
                crew: int = 1
            # +kubebuilder:object:root=true
            # +kubebuilder:storageversion
            class Ship(Resource, group_version=GROUP_VERSION):
                spec: ShipSpec
            """,
        },
    )
    crd = generate(root)["fleet.example.com_ships.yaml"]
    v1 = crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]
    assert v1["properties"]["spec"]["required"] == ["crew", "hull"]
    assert "required" not in v1  # spec itself is optional in the package
    v2 = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert v2["properties"]["spec"]["required"] == ["name"] and v2["required"] == ["spec"]
