"""`pyop init --namespaced`: the manager watches its own namespace and gets a Role, not a ClusterRole."""

from __future__ import annotations

import subprocess
from pathlib import Path

import kubernetes_validate
import yaml


def test_namespaced_project_builds_with_roles(tmp_path: Path, pyop, kubectl: str) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "ns-operator"
    root.mkdir()
    assert pyop("init", "--namespaced", "--domain", "example.com", cwd=root).exit_code == 0
    assert pyop("create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", cwd=root).exit_code == 0
    assert pyop("make", "manifests", cwd=root).exit_code == 0

    assert yaml.safe_load((root / "PROJECT").read_text())["namespaced"] is True
    built = subprocess.run([kubectl, "kustomize", str(root / "config/default")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    documents = [d for d in yaml.safe_load_all(built.stdout) if d]
    for document in documents:
        kubernetes_validate.validate(document, "1.32", strict=True)
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in documents}
    role = by_name[("Role", "ns-operator-manager-role")]
    assert role["metadata"]["namespace"] == "ns-operator-system"
    assert {
        "apiGroups": ["crew.example.com"],
        "resources": ["captains"],
        "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
    } in role["rules"]
    binding = by_name[("RoleBinding", "ns-operator-manager-rolebinding")]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "ns-operator-manager-role",
    }
    assert ("ClusterRole", "ns-operator-manager-role") not in by_name
    deployment = by_name[("Deployment", "ns-operator-controller-manager")]
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "WATCH_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}} in env
    main = (root / "ns_operator/main.py").read_text()
    assert "WATCH_NAMESPACE must be set" in main
