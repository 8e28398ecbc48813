"""config/default with the aggregated API server, built by `kubectl kustomize` and checked against Kubernetes'
schemas (kubernetes-validate, strict): what kube-aggregator and the server need, wired with the project's names."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from apiserver_scaffold.conftest import FLUNDER, ok

KUBERNETES_VERSION = "1.32"
CERT_MANAGER_KINDS = {"Certificate", "Issuer"}
PREFIX = "wardle-operator-"
NAMESPACE = "wardle-operator-system"
CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")


def _build(kubectl: str, root: Path) -> dict[tuple[str, str], dict[str, Any]]:
    built = subprocess.run([kubectl, "kustomize", str(root / "config/default")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    documents = [d for d in yaml.safe_load_all(built.stdout) if d]
    for document in documents:
        if document["kind"] not in CERT_MANAGER_KINDS:
            kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in documents}
    assert len(by_name) == len(documents)
    return by_name


def _container(deployment: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == name)


@pytest.mark.parametrize("order", ["webhook-first", "apiserver-first", "apiserver-only"])
def test_config_default_builds_valid_objects_for_the_server(project: Path, pyop, kubectl: str, order: str) -> None:  # type: ignore[no-untyped-def]
    webhook = ("create", "webhook", *CAPTAIN, "--defaulting")
    steps: list[tuple[str, ...]] = [("create", "apiserver", *FLUNDER, "--kind", "Fischer")]
    if order != "apiserver-only":
        steps.insert(0, ("create", "api", *CAPTAIN))
        steps.insert(1 if order == "webhook-first" else 2, webhook)
        steps.append(("make", "manifests"))  # the CRD and webhook configuration; the server's kinds are no CRDs
    for step in steps:
        ok(pyop(*step, cwd=project))
    objects = _build(kubectl, project)
    if order != "apiserver-only":
        assert [name for kind, name in objects if kind == "CustomResourceDefinition"] == ["captains.crew.example.com"]

    apiservice = objects[("APIService", "v1alpha1.wardle.example.com")]
    assert apiservice["spec"]["service"] == {"name": f"{PREFIX}apiserver", "namespace": NAMESPACE, "port": 443}
    assert apiservice["metadata"]["annotations"] == {
        "cert-manager.io/inject-ca-from": f"{NAMESPACE}/{PREFIX}apiserver-serving-cert"
    }
    assert "insecureSkipTLSVerify" not in apiservice["spec"]
    certificate = objects[("Certificate", f"{PREFIX}apiserver-serving-cert")]
    assert certificate["spec"]["dnsNames"] == [
        f"{PREFIX}apiserver.{NAMESPACE}.svc",
        f"{PREFIX}apiserver.{NAMESPACE}.svc.cluster.local",
    ]
    assert certificate["spec"]["issuerRef"]["name"] == f"{PREFIX}apiserver-selfsigned-issuer"

    account = {"kind": "ServiceAccount", "name": f"{PREFIX}apiserver", "namespace": NAMESPACE}
    reader = objects[("RoleBinding", f"{PREFIX}apiserver-auth-reader")]
    assert reader["metadata"]["namespace"] == "kube-system"
    assert reader["roleRef"]["name"] == "extension-apiserver-authentication-reader"
    assert reader["subjects"] == [account]
    delegator = objects[("ClusterRoleBinding", f"{PREFIX}apiserver-auth-delegator")]
    assert delegator["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "system:auth-delegator",
    }
    assert delegator["subjects"] == [account]
    role = objects[("ClusterRole", f"{PREFIX}apiserver-role")]
    reads = {(r["apiGroups"][0], resource) for r in role["rules"] for resource in r["resources"]}
    assert ("", "namespaces") in reads and ("admissionregistration.k8s.io", "validatingwebhookconfigurations") in reads
    assert objects[("ClusterRoleBinding", f"{PREFIX}apiserver-rolebinding")]["subjects"] == [account]
    editor = objects[("ClusterRole", f"{PREFIX}wardle-flunder-editor-role")]
    assert editor["rules"][0]["apiGroups"] == ["wardle.example.com"] and editor["rules"][0]["resources"] == ["flunders"]

    deployment = objects[("Deployment", f"{PREFIX}apiserver")]
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == f"{PREFIX}apiserver"
    assert pod["securityContext"]["runAsNonRoot"] is True
    server = _container(deployment, "apiserver")
    assert server["command"] == ["python", "-m", "wardle_operator.apiserver"]
    assert server["securityContext"]["readOnlyRootFilesystem"] is True
    assert server["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert server["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert server["readinessProbe"]["httpGet"]["path"] == "/readyz"
    # None of the manager's patches (metrics, webhooks) reach the server's Deployment.
    assert all(arg.startswith(("--secure-port", "--tls-", "--storage-", "--etcd-")) for arg in server["args"])
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["serving-cert"]["secret"]["secretName"] == "apiserver-serving-cert"
    service = objects[("Service", f"{PREFIX}apiserver")]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    manager = objects[("Deployment", f"{PREFIX}controller-manager")]
    manager_labels = manager["spec"]["template"]["metadata"]["labels"]
    assert not all(manager_labels.get(k) == v for k, v in service["spec"]["selector"].items())
    manager_args = _container(manager, "manager")["args"]
    assert "--metrics-bind-address=:8443" in manager_args
    if order != "apiserver-only":
        assert "--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs" in manager_args
