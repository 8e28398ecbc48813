"""The main job end to end: init, two APIs in two groups, manifests, then real kustomize and Kubernetes schemas."""

from __future__ import annotations

import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

KUBERNETES_VERSION = "1.32"


@pytest.fixture
def project(tmp_path: Path, pyop) -> Path:  # type: ignore[no-untyped-def]
    root = tmp_path / "fleet-operator"
    root.mkdir()
    assert pyop("init", "--domain", "example.com", "--multigroup", "--owner", "Fleet Ltd", cwd=root).exit_code == 0
    assert pyop("create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", cwd=root).exit_code == 0
    result = pyop(
        "create", "api", "--group", "ship", "--version", "v1beta1", "--kind", "Frigate", "--cluster-scoped", cwd=root
    )
    assert result.exit_code == 0, result.stderr
    result = pyop("make", "manifests", cwd=root)
    assert result.exit_code == 0, result.stderr
    return root


def test_init_writes_a_complete_project(project: Path) -> None:
    for path in (
        "PROJECT",
        "pyproject.toml",
        "Dockerfile",
        ".dockerignore",
        ".gitignore",
        "Makefile",
        "README.md",
        "fleet_operator/main.py",
        "fleet_operator/api/__init__.py",
        "fleet_operator/controllers/__init__.py",
        "tests/conftest.py",
        "config/default/kustomization.yaml",
        "config/manager/manager.yaml",
        "config/rbac/service_account.yaml",
        "config/rbac/role_binding.yaml",
        "config/rbac/leader_election_role.yaml",
        "config/rbac/leader_election_role_binding.yaml",
        "config/rbac/metrics_auth_role.yaml",
        "config/rbac/metrics_reader_role.yaml",
        "config/prometheus/monitor.yaml",
        "config/network-policy/allow-metrics-traffic.yaml",
        "config/crd/kustomization.yaml",
        "config/samples/kustomization.yaml",
    ):
        assert (project / path).is_file(), path
    makefile = (project / "Makefile").read_text()
    for target in (
        "help",
        "manifests",
        "fmt",
        "lint",
        "test",
        "run",
        "docker-build",
        "docker-push",
        "build-installer",
        "install",
        "uninstall",
        "deploy",
        "undeploy",
    ):
        assert f"\n{target}:" in makefile, target
    dockerfile = (project / "Dockerfile").read_text()
    assert "USER 65532:65532" in dockerfile and dockerfile.count("FROM ") == 2
    header = (project / "fleet_operator/main.py").read_text()
    assert header.startswith("# Copyright Fleet Ltd.")


def test_project_file_records_both_apis(project: Path) -> None:
    data = yaml.safe_load((project / "PROJECT").read_text())
    assert data["domain"] == "example.com" and data["multigroup"] is True
    kinds = {(r["group"], r["version"], r["kind"]): r for r in data["resources"]}
    assert kinds[("crew", "v1", "Captain")]["api"] == {"crdVersion": "v1", "namespaced": True}
    assert kinds[("ship", "v1beta1", "Frigate")]["api"] == {"crdVersion": "v1", "namespaced": False}
    assert kinds[("ship", "v1beta1", "Frigate")]["path"] == "fleet_operator.api.ship.v1beta1"
    assert all(r["controller"] is True for r in data["resources"])


def test_multigroup_layout_and_controller_registry(project: Path) -> None:
    assert (project / "fleet_operator/api/crew/v1/captain_types.py").is_file()
    assert (project / "fleet_operator/api/ship/v1beta1/frigate_types.py").is_file()
    assert (project / "fleet_operator/controllers/ship/frigate_controller.py").is_file()
    main = (project / "fleet_operator/main.py").read_text()
    assert "from fleet_operator.controllers.crew import captain_controller as crew_captain_controller" in main
    assert "    ship_frigate_controller.setup_with_manager(manager)\n    # +kubebuilder:scaffold:builder" in main


def test_crds_describe_both_kinds(project: Path) -> None:
    captain = yaml.safe_load((project / "config/crd/bases/crew.example.com_captains.yaml").read_text())
    frigate = yaml.safe_load((project / "config/crd/bases/ship.example.com_frigates.yaml").read_text())
    assert captain["metadata"]["name"] == "captains.crew.example.com"
    assert captain["spec"]["scope"] == "Namespaced" and frigate["spec"]["scope"] == "Cluster"
    version = frigate["spec"]["versions"][0]
    assert version["name"] == "v1beta1" and version["storage"] is True and version["served"] is True
    assert version["subresources"] == {"status": {}}
    schema = version["schema"]["openAPIV3Schema"]
    assert schema["properties"]["spec"]["properties"]["foo"] == {
        "description": "foo is an example field of Frigate. Edit frigate_types.py to remove or update it.",
        "type": "string",
    }
    conditions = schema["properties"]["status"]["properties"]["conditions"]
    assert conditions["x-kubernetes-list-type"] == "map" and conditions["x-kubernetes-list-map-keys"] == ["type"]


def test_rbac_role_merges_controller_markers(project: Path) -> None:
    role = yaml.safe_load((project / "config/rbac/role.yaml").read_text())
    assert role["kind"] == "ClusterRole" and role["metadata"]["name"] == "manager-role"
    rules = {(tuple(r["apiGroups"]), tuple(r["resources"])): r["verbs"] for r in role["rules"]}
    assert rules[(("crew.example.com",), ("captains",))] == [
        "create",
        "delete",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ]
    assert rules[(("ship.example.com",), ("frigates/status",))] == ["get", "patch", "update"]
    assert rules[(("crew.example.com",), ("captains/finalizers",))] == ["update"]


def test_kustomize_builds_and_every_object_is_valid_kubernetes(project: Path, kubectl: str) -> None:
    built = subprocess.run(
        [kubectl, "kustomize", str(project / "config/default")], capture_output=True, text=True, check=False
    )
    assert built.returncode == 0, built.stderr
    documents = [d for d in yaml.safe_load_all(built.stdout) if d]
    kinds = sorted({d["kind"] for d in documents})
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "Deployment",
        "Namespace",
        "NetworkPolicy",
        "Role",
        "RoleBinding",
        "Service",
        "ServiceAccount",
    ]
    for document in documents:
        kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    assert deployment["metadata"]["namespace"] == "fleet-operator-system"
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
    }
    pod_security = deployment["spec"]["template"]["spec"]["securityContext"]
    assert pod_security["runAsNonRoot"] is True and pod_security["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert "--metrics-bind-address=:8443" in container["args"]
    assert set(container["resources"]) == {"limits", "requests"}


def test_samples_and_crd_kustomizations_build(project: Path, kubectl: str) -> None:
    for folder in ("config/samples", "config/crd"):
        built = subprocess.run([kubectl, "kustomize", str(project / folder)], capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        assert len([d for d in yaml.safe_load_all(built.stdout) if d]) == 2


def test_rerunning_make_manifests_rewrites_nothing(project: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    before = tree(project)
    mtimes = {p: p.stat().st_mtime_ns for p in (project / "config").rglob("*.yaml")}
    result = pyop("make", "manifests", cwd=project)
    assert result.exit_code == 0
    assert tree(project) == before
    assert {p: p.stat().st_mtime_ns for p in (project / "config").rglob("*.yaml")} == mtimes
    assert "created" not in result.stdout and "updated" not in result.stdout


def test_same_input_gives_byte_identical_projects(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    snapshots = []
    for name in ("a", "b"):
        root = tmp_path / name / "same-operator"
        root.mkdir(parents=True)
        pyop("init", "--domain", "example.com", cwd=root)
        pyop("create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", cwd=root)
        pyop("make", "manifests", cwd=root)
        snapshots.append(tree(root))
    assert snapshots[0] == snapshots[1]


def test_generated_project_tests_pass(project: Path, project_pytest) -> None:  # type: ignore[no-untyped-def]
    result = project_pytest(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout
