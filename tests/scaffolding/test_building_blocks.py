"""The small pieces commands are made of: plurals, names, change sets, YAML and insertion-point edits, RBAC."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pyop.api.naming import default_plural
from pyop_scaffold.edit.insertion import insert_at_marker
from pyop_scaffold.edit.yaml_edit import append_unique
from pyop_scaffold.errors import ConflictError, ProjectError
from pyop_scaffold.manifests.errors import SourceLocation
from pyop_scaffold.manifests.markers.parser import parse_marker
from pyop_scaffold.manifests.rbac import build_roles
from pyop_scaffold.project.names import snake_case
from pyop_scaffold.render.changeset import Action, ChangeSet, IfExists


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("Captain", "captains"),
        ("Policy", "policies"),
        ("Gateway", "gateways"),
        ("Status", "statuses"),
        ("Box", "boxes"),
        ("Class", "classes"),
        ("Person", "people"),
        ("Child", "children"),
        ("Index", "indices"),
        ("Leaf", "leaves"),
        ("Knife", "knives"),
        ("Sheep", "sheep"),
        ("Analysis", "analyses"),
        ("Proxy", "proxies"),
        ("CronJob", "cronjobs"),
        ("Ingress", "ingresses"),
        ("Chief", "chiefs"),
        ("Mouse", "mice"),
        ("Quiz", "quizzes"),
        ("Potato", "potatoes"),
        ("Photo", "photos"),
        ("Salesperson", "salespeople"),
        ("Endpoints", "endpoints"),
    ],
)
def test_default_plural(kind: str, plural: str) -> None:
    assert default_plural(kind) == plural


def test_snake_case() -> None:
    assert [snake_case(k) for k in ("FirstMate", "Captain", "HTTPRoute", "V1Thing")] == [
        "first_mate",
        "captain",
        "http_route",
        "v1_thing",
    ]


def test_change_set_refuses_conflicts_before_writing(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("user work")
    changes = ChangeSet(tmp_path)
    changes.add_file("new/a.txt", "a")
    changes.add_file("mine.txt", "template")
    with pytest.raises(ConflictError, match="mine.txt: pass --force"):
        changes.apply()
    assert not (tmp_path / "new").exists()
    assert (tmp_path / "mine.txt").read_text() == "user work"


def test_change_set_skip_unchanged_and_force(tmp_path: Path) -> None:
    (tmp_path / "shared.py").write_text("kept")
    (tmp_path / "same.txt").write_text("same")
    (tmp_path / "owned.txt").write_text("edited")
    changes = ChangeSet(tmp_path, force=True)
    changes.add_file("shared.py", "template", IfExists.SKIP)
    changes.add_file("same.txt", "same")
    changes.add_file("owned.txt", "fresh")
    planned = {p.path: p.action for p in changes.apply()}
    assert planned == {"shared.py": Action.OVERWRITE, "same.txt": Action.UNCHANGED, "owned.txt": Action.OVERWRITE}
    without_force = ChangeSet(tmp_path)
    without_force.add_file("shared.py", "other", IfExists.SKIP)
    assert [p.action for p in without_force.apply()] == [Action.SKIP]
    assert (tmp_path / "shared.py").read_text() == "template"


def test_change_set_restores_files_when_a_rename_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.txt").write_text("old a")
    (tmp_path / "b.txt").write_text("old b")
    changes = ChangeSet(tmp_path)
    changes.update_file("a.txt", "new a")
    changes.update_file("b.txt", "new b")
    changes.update_file("c.txt", "new c")
    real_replace = os.replace
    calls = []

    def failing_replace(src: str | Path, dst: str | Path) -> None:
        calls.append((src, dst))
        if len(calls) == 4:  # a.txt backed up and replaced, b.txt backed up, then the disk "fails"
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        changes.apply()
    monkeypatch.setattr(os, "replace", real_replace)
    assert (tmp_path / "a.txt").read_text() == "old a"
    assert (tmp_path / "b.txt").read_text() == "old b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_yaml_append_keeps_comments_and_marker_at_the_end() -> None:
    text = "# head\nresources:\n- a.yaml  # mine\n# trailing note\n# +kubebuilder:scaffold:x\n"
    once = append_unique(text, "resources", ["b.yaml"], source="k.yaml")
    assert once == "# head\nresources:\n- a.yaml  # mine\n- b.yaml\n# trailing note\n# +kubebuilder:scaffold:x\n"
    plain = "resources:\n- a.yaml\n# +kubebuilder:scaffold:x\n"
    assert append_unique(plain, "resources", ["b.yaml"], source="k.yaml") == (
        "resources:\n- a.yaml\n- b.yaml\n# +kubebuilder:scaffold:x\n"
    )
    eol_only = "resources:\n- a.yaml  # mine\n"
    assert (
        append_unique(eol_only, "resources", ["b.yaml"], source="k.yaml") == "resources:\n- a.yaml  # mine\n- b.yaml\n"
    )
    assert append_unique(once, "resources", ["b.yaml", "a.yaml"], source="k.yaml") == once
    with pytest.raises(ProjectError, match="k.yaml: not valid YAML"):
        append_unique("resources: [\n", "resources", ["x"], source="k.yaml")


def test_insertion_points_are_idempotent_and_keep_indentation() -> None:
    text = "def f():\n    x = 1\n    # +kubebuilder:scaffold:builder\n"
    once = insert_at_marker(text, "builder", "setup(a)", source="main.py")
    assert once == "def f():\n    x = 1\n    setup(a)\n    # +kubebuilder:scaffold:builder\n"
    assert insert_at_marker(once, "builder", "setup(a)", source="main.py") == once
    with pytest.raises(ProjectError, match="insertion point '# \\+kubebuilder:scaffold:imports' is missing"):
        insert_at_marker(text, "imports", "import x", source="main.py")


def _rbac(*texts: str) -> list:  # type: ignore[type-arg]
    markers = [parse_marker(t, SourceLocation("c.py", i)) for i, t in enumerate(texts, 1)]
    return [m for m in markers if m is not None]


def test_rbac_rules_are_merged_deduplicated_and_sorted() -> None:
    markers = _rbac(
        "kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list",
        "kubebuilder:rbac:groups=apps,resources=deployments,verbs=watch;get",
        "kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch",
        "kubebuilder:rbac:groups=core,resources=pods,verbs=*;get",
        "kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch",
        "kubebuilder:rbac:urls=/metrics,verbs=get",
        'kubebuilder:rbac:groups="",resources=configmaps,verbs=get,namespace=infra',
    )
    roles = build_roles(markers, namespaced_project=False)
    assert [(r["kind"], r["metadata"].get("namespace"), r["metadata"]["name"]) for r in roles] == [
        ("ClusterRole", None, "manager-role"),
        ("Role", "infra", "manager-role"),
    ]
    assert roles[0]["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]},
        {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "list", "watch"]},
        {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
    ]


def test_namespaced_projects_get_a_role() -> None:
    roles = build_roles(_rbac("kubebuilder:rbac:groups=apps,resources=deployments,verbs=get"), namespaced_project=True)
    assert [r["kind"] for r in roles] == ["Role"]
