"""`pyop edit`: project-wide settings changed after `pyop init`, keeping the user's work and writing nothing twice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from pyop_scaffold.commands.edit import EditOptions, edit_project
from pyop_scaffold.errors import ConflictError, UsageError

CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")
BOAT = ("--group", "ship", "--version", "v1", "--kind", "Boat")


def _project(root: Path, pyop, *init_flags: str, apis: tuple[tuple[str, ...], ...] = ()) -> Path:  # type: ignore[no-untyped-def]
    root.mkdir(parents=True)
    assert pyop("init", "--domain", "example.com", *init_flags, cwd=root).exit_code == 0
    for api in apis:
        assert pyop("create", "api", *api, cwd=root).exit_code == 0
    return root


def _ok(pyop, root: Path, *args: str) -> str:  # type: ignore[no-untyped-def]
    result = pyop("edit", *args, cwd=root)
    assert result.exit_code == 0, result.stdout + result.stderr
    return str(result.stdout)


def _refused(pyop, tree, root: Path, *args: str) -> str:  # type: ignore[no-untyped-def]
    before = tree(root)
    result = pyop("edit", *args, cwd=root)
    assert result.exit_code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert tree(root) == before
    return str(lines[0])


@pytest.mark.parametrize(
    ("start", "flag", "target"), [([], "--namespaced", ["--namespaced"]), (["--namespaced"], "--namespaced=false", [])]
)
def test_scope_edit_gives_the_project_init_would_have_made(tmp_path: Path, pyop, tree, start, flag, target) -> None:  # type: ignore[no-untyped-def]
    edited = _project(tmp_path / "edited" / "op", pyop, *start)
    fresh = _project(tmp_path / "fresh" / "op", pyop, *target)
    _ok(pyop, edited, flag)
    assert tree(edited) == tree(fresh)


def test_namespaced_edit_builds_and_make_manifests_writes_roles(tmp_path: Path, pyop, tree, kubectl: str) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "ns-op", pyop, apis=(CAPTAIN,))
    assert pyop("make", "manifests", cwd=root).exit_code == 0
    out = _ok(pyop, root, "--namespaced")
    assert "make manifests" in out
    assert yaml.safe_load((root / "PROJECT").read_text())["namespaced"] is True
    assert "WATCH_NAMESPACE must be set" in (root / "ns_op/main.py").read_text()

    def build() -> dict[tuple[str, str], dict]:  # type: ignore[type-arg]
        built = subprocess.run([kubectl, "kustomize", str(root / "config/default")], capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        documents = [d for d in yaml.safe_load_all(built.stdout) if d]
        for document in documents:
            kubernetes_validate.validate(document, "1.32", strict=True)
        return {(d["kind"], d["metadata"]["name"]): d for d in documents}

    by_name = build()  # right after the edit, before make manifests runs again
    assert ("ClusterRole", "ns-op-manager-role") not in by_name
    assert by_name[("Role", "ns-op-manager-role")]["metadata"]["namespace"] == "ns-op-system"
    binding = by_name[("RoleBinding", "ns-op-manager-rolebinding")]
    assert binding["metadata"]["namespace"] == "ns-op-system"
    assert binding["roleRef"]["kind"] == "Role"
    env = by_name[("Deployment", "ns-op-controller-manager")]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "WATCH_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}} in env

    before = tree(root)
    assert pyop("make", "manifests", cwd=root).exit_code == 0
    assert tree(root) == before  # the edit switched the role's kind as make manifests does; nothing left to do
    role = build()[("Role", "ns-op-manager-role")]
    assert {
        "apiGroups": ["crew.example.com"],
        "resources": ["captains"],
        "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
    } in role["rules"]

    _ok(pyop, root, "--namespaced=false")
    assert pyop("make", "manifests", cwd=root).exit_code == 0
    by_name = build()
    assert ("Role", "ns-op-manager-role") not in by_name
    assert by_name[("ClusterRole", "ns-op-manager-role")]["rules"] == role["rules"]
    assert by_name[("ClusterRoleBinding", "ns-op-manager-rolebinding")]["roleRef"]["kind"] == "ClusterRole"
    assert "WATCH_NAMESPACE must be set" not in (root / "ns_op/main.py").read_text()


@pytest.mark.parametrize(
    "args",
    [
        ("--namespaced",),
        ("--namespaced=false",),
        ("--multigroup",),
        ("--multigroup=false",),
        ("--owner", "Acme Ltd"),
        ("--license", "none"),
        ("--namespaced", "--multigroup", "--license", "apache2", "--owner", "Acme Ltd"),
    ],
    ids=lambda a: " ".join(a),
)
def test_rerun_writes_nothing(tmp_path: Path, pyop, tree, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, apis=(CAPTAIN,))
    _ok(pyop, root, *args)
    before = tree(root)
    out = _ok(pyop, root, *args)
    assert tree(root) == before
    assert "updated" not in out and "created" not in out and "move" not in out.lower()
    assert "nothing changed: the project already has these settings" in out


def test_scope_edits_keep_the_users_changes(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, apis=(CAPTAIN,))
    manager = root / "config/manager/manager.yaml"
    manager.write_text(
        manager.read_text()
        .replace(
            '          value: "1"\n',
            '          value: "1"\n        # tuned by us\n        - name: GOMAXPROCS\n          value: "2"\n',
        )
        .replace("memory: 256Mi", "memory: 512Mi  # big samples")
    )
    binding = root / "config/rbac/role_binding.yaml"
    binding.write_text(binding.read_text().replace("  labels:\n", "  labels:\n    team: deck  # ours\n"))
    main = root / "op/main.py"
    main.write_text(
        main.read_text().replace(
            '    value = os.environ.get("WATCH_NAMESPACE", "").strip()\n',
            '    # Our note.\n    value = os.environ.get("WATCH_NAMESPACE", "").strip()\n'
            '    print("watching", value)\n',
        )
    )

    _ok(pyop, root, "--namespaced")
    text = manager.read_text()
    assert "# tuned by us\n        - name: GOMAXPROCS\n" in text and "memory: 512Mi  # big samples" in text
    env = yaml.safe_load_all(text)
    container = [d for d in env if d["kind"] == "Deployment"][0]["spec"]["template"]["spec"]["containers"][0]
    assert [e["name"] for e in container["env"]] == ["PYTHONDONTWRITEBYTECODE", "GOMAXPROCS", "WATCH_NAMESPACE"]
    assert "    team: deck  # ours\n" in binding.read_text()
    assert yaml.safe_load(binding.read_text())["kind"] == "RoleBinding"
    source = main.read_text()
    assert (
        '    value = os.environ.get("WATCH_NAMESPACE", "").strip()\n'
        "    if not value:\n"
        '        raise SystemExit("WATCH_NAMESPACE must be set: this operator is namespace-scoped")\n'
        '    print("watching", value)\n'
    ) in source
    assert "crew_captain_controller.setup_with_manager(manager)" in source

    _ok(pyop, root, "--namespaced=false")
    text = manager.read_text()
    assert "WATCH_NAMESPACE" not in text and "GOMAXPROCS" in text and "# big samples" in text
    assert "    team: deck  # ours\n" in binding.read_text()
    assert "namespace: system\n" not in binding.read_text().split("roleRef")[0]
    assert "WATCH_NAMESPACE must be set" not in main.read_text() and "# Our note." in main.read_text()


def test_files_that_cannot_be_edited_in_place_are_refused_or_forced(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, apis=(CAPTAIN,))
    manager = root / "config/manager/manager.yaml"
    manager.write_text(manager.read_text().replace("      - name: manager\n", "      - name: operator\n"))
    main = root / "op/main.py"
    main.write_text(
        main.read_text().replace(
            '    value = os.environ.get("WATCH_NAMESPACE", "").strip()\n',
            '    value = os.getenv("WATCH_NAMESPACE") or ""\n',
        )
    )
    line = _refused(pyop, tree, root, "--namespaced")
    assert "config/manager/manager.yaml (no container 'manager' in Deployment controller-manager)" in line
    assert "op/main.py (watch_namespaces() has no line" in line
    assert "pass --force" in line

    _ok(pyop, root, "--namespaced", "--force")
    deployment = [d for d in yaml.safe_load_all(manager.read_text()) if d["kind"] == "Deployment"][0]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["name"] == "manager"
    assert container["env"][-1]["name"] == "WATCH_NAMESPACE"
    source = main.read_text()
    assert 'raise SystemExit("WATCH_NAMESPACE must be set' in source
    assert 'os.getenv("WATCH_NAMESPACE")' not in source
    assert "crew_captain_controller.setup_with_manager(manager)" in source  # only the function was replaced


def test_own_watch_namespace_blocks_cluster_scope_without_force(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, "--namespaced")
    manager = root / "config/manager/manager.yaml"
    manager.write_text(
        manager.read_text().replace(
            "          valueFrom:\n            fieldRef:\n              fieldPath: metadata.namespace\n",
            "          value: team-a,team-b\n",
        )
    )
    line = _refused(pyop, tree, root, "--namespaced=false")
    assert "config/manager/manager.yaml (the manager container sets WATCH_NAMESPACE to a value of your own)" in line
    _ok(pyop, root, "--namespaced=false", "--force")
    assert "WATCH_NAMESPACE" not in manager.read_text()


def test_multigroup_records_layout_and_names_files_to_move(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, apis=(CAPTAIN,))
    before = tree(root)
    out = _ok(pyop, root, "--multigroup")
    changed = {path for path, digest in tree(root).items() if before.get(path) != digest}
    assert changed == {"PROJECT"}
    assert yaml.safe_load((root / "PROJECT").read_text())["multigroup"] is True
    assert "op/api/v1/captain_types.py -> op/api/crew/v1/captain_types.py" in out
    assert "op/api/v1/groupversion_info.py -> op/api/crew/v1/groupversion_info.py" in out
    assert "op/controllers/captain_controller.py -> op/controllers/crew/captain_controller.py" in out

    assert pyop("create", "api", *BOAT, cwd=root).exit_code == 0
    assert (root / "op/api/ship/v1/boat_types.py").is_file()
    assert (root / "op/controllers/ship/boat_controller.py").is_file()
    assert pyop("make", "manifests", cwd=root).exit_code == 0
    assert (root / "config/crd/bases/crew.example.com_captains.yaml").is_file()
    assert (root / "config/crd/bases/ship.example.com_boats.yaml").is_file()

    line = _refused(pyop, tree, root, "--multigroup=false")
    assert line == (
        "Error: invalid --multigroup=false: this project has groups 'crew', 'ship', "
        "and a single-group project holds one"
    )


def test_multigroup_off_with_one_group_names_files_too(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, "--multigroup", apis=(CAPTAIN,))
    out = _ok(pyop, root, "--multigroup=false")
    assert "multigroup" not in yaml.safe_load((root / "PROJECT").read_text())
    assert "new APIs use api/<version>" in out
    assert "op/api/crew/v1/captain_types.py -> op/api/v1/captain_types.py" in out


def test_license_and_owner_change_only_the_boilerplate(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, apis=(CAPTAIN,))
    before = tree(root)
    _ok(pyop, root, "--owner", "Acme Ltd")
    after = tree(root)
    assert {p for p in after if after[p] != before.get(p)} == {"hack/boilerplate.py.txt"}
    assert (
        (root / "hack/boilerplate.py.txt")
        .read_text()
        .startswith("# Copyright Acme Ltd.\n#\n# Licensed under the Apache")
    )
    assert (root / "op/api/v1/captain_types.py").read_text().startswith("# Copyright The op Authors.")

    assert pyop("create", "api", "--group", "crew", "--version", "v2", "--kind", "Captain", cwd=root).exit_code == 0
    assert (root / "op/api/v2/captain_types.py").read_text().startswith("# Copyright Acme Ltd.\n")

    _ok(pyop, root, "--license", "none")
    assert (root / "hack/boilerplate.py.txt").read_text() == ""
    assert pyop("create", "api", "--group", "crew", "--version", "v3", "--kind", "Captain", cwd=root).exit_code == 0
    assert not (root / "op/api/v3/captain_types.py").read_text().startswith("#")


def test_edit_project_is_callable_without_the_cli(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop)
    report = edit_project(root, EditOptions(namespaced=True))
    assert sorted(report.paths(*{f.action for f in report.files})) == [
        "PROJECT",
        "config/manager/manager.yaml",
        "config/rbac/role.yaml",
        "config/rbac/role_binding.yaml",
        "op/main.py",
    ]
    with pytest.raises(UsageError, match="nothing to edit"):
        edit_project(root, EditOptions())
    (root / "config/rbac/role_binding.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    with pytest.raises(ConflictError, match="config/rbac/role_binding.yaml"):
        edit_project(root, EditOptions(namespaced=False))


def test_owner_alone_on_a_project_without_header_is_refused(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, "--license", "none")
    line = _refused(pyop, tree, root, "--owner", "Acme")
    assert line.startswith("Error: invalid --owner 'Acme': the licence is none")
    _ok(pyop, root, "--license", "apache2", "--owner", "Acme")
    assert (root / "hack/boilerplate.py.txt").read_text().startswith("# Copyright Acme.\n")


def test_scaffolds_after_multigroup_find_apis_where_project_records_them(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, apis=(CAPTAIN,))
    _ok(pyop, root, "--multigroup")
    assert pyop("create", "api", "--group", "crew", "--version", "v2", "--kind", "Captain", cwd=root).exit_code == 0
    assert (root / "op/api/crew/v2/captain_types.py").is_file()
    result = pyop("create", "webhook", *CAPTAIN, "--defaulting", "--conversion", "--spoke", "v2", cwd=root)
    assert result.exit_code == 0, result.stderr

    webhook = (root / "op/webhook/crew/v1/captain_webhook.py").read_text()
    assert "from op.api.v1.captain_types import Captain\n" in webhook  # the hub stayed in the old layout
    assert "from op.api.crew.v2.captain_types import Captain as CaptainV2\n" in webhook
    assert (
        "# +kubebuilder:storageversion\nclass Captain(\n    Resource,\n    Hub,\n"
        in (root / "op/api/v1/captain_types.py").read_text()
    )
    assert (
        "from op.api.v1.captain_types import Captain as HubCaptain\n"
        in (root / "op/api/crew/v2/captain_types.py").read_text()
    )
    imported = subprocess.run(
        [sys.executable, "-c", "import op.main, op.webhook.crew.v1.captain_webhook"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0, imported.stderr
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=root, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr  # the project's own `make lint`
    assert pyop("make", "manifests", cwd=root).exit_code == 0
    crd = yaml.safe_load((root / "config/crd/bases/crew.example.com_captains.yaml").read_text())
    assert {v["name"]: v["storage"] for v in crd["spec"]["versions"]} == {"v1": True, "v2": False}
