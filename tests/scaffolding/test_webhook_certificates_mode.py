"""`--certificates=pyop`: webhooks deployed without cert-manager, the manager's own certificates wired by kustomize
with least-privilege RBAC; recorded in PROJECT; refused where it cannot be honoured; the project's tests pass."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")


def _ok(result) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.stdout + result.stderr


@pytest.fixture
def project(tmp_path: Path, pyop) -> Path:  # type: ignore[no-untyped-def]
    root = tmp_path / "fleet"
    root.mkdir()
    _ok(pyop("init", "--domain", "example.com", cwd=root))
    for version in ("v1", "v2"):
        _ok(pyop("create", "api", "--group", "crew", "--version", version, "--kind", "Captain", cwd=root))
    _ok(
        pyop(
            "create", "webhook", *CAPTAIN, "--defaulting", "--programmatic-validation", "--certificates=pyop", cwd=root
        )
    )
    _ok(pyop("create", "webhook", *CAPTAIN, "--conversion", "--spoke", "v2", cwd=root))  # the project's mode
    return root


def _build(root: Path, kubectl: str, pyop) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    _ok(pyop("make", "manifests", cwd=root))
    out = subprocess.run([kubectl, "kustomize", str(root / "config" / "default")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def _one(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(doc for doc in docs if doc["kind"] == kind and doc["metadata"]["name"] == name)


def test_the_mode_is_recorded_and_config_default_needs_no_cert_manager(
    project: Path,
    pyop,
    kubectl: str,  # type: ignore[no-untyped-def]
) -> None:
    assert yaml.safe_load((project / "PROJECT").read_text())["certificates"] == "pyop"
    assert not (project / "config" / "certmanager").exists()
    docs = _build(project, kubectl, pyop)
    assert not {doc["kind"] for doc in docs} & {"Certificate", "Issuer"}
    assert not any("cert-manager.io/inject-ca-from" in (doc["metadata"].get("annotations") or {}) for doc in docs)
    deployment = _one(docs, "Deployment", "fleet-controller-manager")
    pod = deployment["spec"]["template"]["spec"]
    env = {item["name"]: item.get("value", item.get("valueFrom")) for item in pod["containers"][0]["env"]}
    assert env["WEBHOOK_CERTIFICATES"] == "pyop"
    assert env["POD_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    # The names kustomize gave them: what the manager injects the CA into.
    assert env["WEBHOOK_SERVICE_NAME"] == "fleet-webhook-service"
    assert env["WEBHOOK_MUTATING_CONFIGURATIONS"] == "fleet-mutating-webhook-configuration"
    assert env["WEBHOOK_VALIDATING_CONFIGURATIONS"] == "fleet-validating-webhook-configuration"
    assert env["WEBHOOK_CONVERSION_CRDS"] == "captains.crew.example.com"
    assert {"name": "webhook-certs", "emptyDir": {}} in pod["volumes"]  # no Secret volume: replicas write the pair
    main = (project / "fleet" / "main.py").read_text()
    assert "certificates_from_environment(manager)" in main


def test_the_rbac_allows_its_own_secret_configurations_and_crds_by_name_only(
    project: Path,
    pyop,
    kubectl: str,  # type: ignore[no-untyped-def]
) -> None:
    docs = _build(project, kubectl, pyop)
    role = _one(docs, "Role", "fleet-webhook-certificates-role")
    assert role["metadata"]["namespace"] == "fleet-system"
    assert role["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": ["webhook-server-cert"],
            "verbs": ["get", "update"],
        },
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},  # RBAC cannot name what is created
    ]
    cluster_role = _one(docs, "ClusterRole", "fleet-webhook-certificates-role")
    by_resource = {rule["resources"][0]: rule for rule in cluster_role["rules"]}
    assert by_resource["mutatingwebhookconfigurations"]["resourceNames"] == ["fleet-mutating-webhook-configuration"]
    assert by_resource["validatingwebhookconfigurations"]["resourceNames"] == ["fleet-validating-webhook-configuration"]
    assert by_resource["customresourcedefinitions"]["resourceNames"] == ["captains.crew.example.com"]
    assert all(rule["verbs"] == ["get", "update"] and rule.get("resourceNames") for rule in cluster_role["rules"])
    binding = _one(docs, "ClusterRoleBinding", "fleet-webhook-certificates-rolebinding")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "fleet-controller-manager", "namespace": "fleet-system"}
    ]


def test_the_generated_files_are_deterministic(project: Path, tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    again = tmp_path / "again" / "fleet"
    again.mkdir(parents=True)
    _ok(pyop("init", "--domain", "example.com", cwd=again))
    for version in ("v1", "v2"):
        _ok(pyop("create", "api", "--group", "crew", "--version", version, "--kind", "Captain", cwd=again))
    _ok(
        pyop(
            "create", "webhook", *CAPTAIN, "--defaulting", "--programmatic-validation", "--certificates=pyop", cwd=again
        )
    )
    _ok(pyop("create", "webhook", *CAPTAIN, "--conversion", "--spoke", "v2", cwd=again))
    for path in (
        "config/rbac/webhook_certificates_role.yaml",
        "config/default/manager_webhook_certificates_patch.yaml",
        "config/default/kustomization.yaml",
    ):
        assert (again / path).read_bytes() == (project / path).read_bytes(), path


def test_a_bad_mode_is_refused_and_nothing_written(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "fleet"
    root.mkdir()
    _ok(pyop("init", "--domain", "example.com", cwd=root))
    _ok(pyop("create", "api", *CAPTAIN, cwd=root))
    before = tree(root)
    result = pyop("create", "webhook", *CAPTAIN, "--defaulting", "--certificates=vault", cwd=root)
    assert result.exit_code == 2
    assert "invalid --certificates 'vault': use one of cert-manager, pyop" in result.stdout + result.stderr
    assert tree(root) == before
    result = pyop("edit", "--certificates", "vault", cwd=root)
    assert result.exit_code == 2 and tree(root) == before


def test_edit_records_the_mode_before_the_first_webhook_and_refuses_a_switch_after(
    tmp_path: Path,
    pyop,
    tree,  # type: ignore[no-untyped-def]
) -> None:
    root = tmp_path / "fleet"
    root.mkdir()
    _ok(pyop("init", "--domain", "example.com", cwd=root))
    _ok(pyop("create", "api", *CAPTAIN, cwd=root))
    _ok(pyop("edit", "--certificates=pyop", cwd=root))
    assert yaml.safe_load((root / "PROJECT").read_text())["certificates"] == "pyop"
    _ok(pyop("create", "webhook", *CAPTAIN, "--defaulting", cwd=root))
    assert (root / "config" / "rbac" / "webhook_certificates_role.yaml").is_file()
    before = tree(root)
    result = pyop("edit", "--certificates=cert-manager", cwd=root)
    assert result.exit_code == 2
    assert "switching an existing webhook config is not supported" in result.stdout + result.stderr
    assert tree(root) == before
    _ok(pyop("edit", "--certificates=pyop", cwd=root))  # the same mode again: nothing to do
    assert tree(root) == before


def test_the_projects_own_tests_pass(project: Path, pyop, project_pytest) -> None:  # type: ignore[no-untyped-def]
    _ok(pyop("make", "manifests", cwd=project))
    result = project_pytest(project)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
