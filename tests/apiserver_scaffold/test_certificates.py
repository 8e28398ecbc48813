"""`pyop create apiserver --certificates`: pyop's own certificates (no cert-manager) or cert-manager's, the project's
choice recorded in PROJECT, switching refused as `create webhook` refuses it, bad values refused."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from apiserver_scaffold.conftest import FLUNDER, ok
from apiserver_scaffold.test_generated_project import _make

KUBERNETES_VERSION = "1.32"
PREFIX = "wardle-operator-"
NAMESPACE = "wardle-operator-system"
FORTUNE = ("--group", "wardle", "--version", "v1beta1", "--kind", "Fortune")
CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")


def _build(kubectl: str, root: Path) -> dict[tuple[str, str], dict[str, Any]]:
    built = subprocess.run([kubectl, "kustomize", str(root / "config/default")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    documents = [d for d in yaml.safe_load_all(built.stdout) if d]
    for document in documents:
        kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)  # nothing of cert-manager's
    return {(d["kind"], d["metadata"]["name"]): d for d in documents}


def test_pyop_certificates_need_no_cert_manager(project: Path, pyop, kubectl: str) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, "--certificates", "pyop", cwd=project))
    assert "certificates: pyop" in (project / "PROJECT").read_text()
    ok(pyop("create", "apiserver", *FORTUNE, cwd=project))  # the project's choice, without the flag
    assert not (project / "config/apiserver/certificate.yaml").exists()
    objects = _build(kubectl, project)
    assert not any(kind in ("Certificate", "Issuer") for kind, _ in objects)

    for name in ("v1alpha1.wardle.example.com", "v1beta1.wardle.example.com"):
        apiservice = objects[("APIService", name)]
        assert "annotations" not in apiservice["metadata"] and "caBundle" not in apiservice["spec"]
        assert apiservice["spec"]["service"] == {"name": f"{PREFIX}apiserver", "namespace": NAMESPACE, "port": 443}

    deployment = objects[("Deployment", f"{PREFIX}apiserver")]
    server = next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "apiserver")
    assert "--serving-cert-secret=apiserver-serving-cert" in server["args"]
    assert "--serving-cert-namespace=$(POD_NAMESPACE)" in server["args"]
    assert "--serving-cert-service=$(SERVICE_NAME)" in server["args"]
    assert not any(arg.startswith("--tls-") for arg in server["args"])
    env = {variable["name"]: variable for variable in server["env"]}
    assert env["SERVICE_NAME"]["value"] == f"{PREFIX}apiserver"  # the Service's prefixed name, by replacement
    assert env["POD_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert "serving-cert" not in {v["name"] for v in deployment["spec"]["template"]["spec"]["volumes"]}

    account = {"kind": "ServiceAccount", "name": f"{PREFIX}apiserver", "namespace": NAMESPACE}
    role = objects[("Role", f"{PREFIX}apiserver-certificates-role")]
    assert role["metadata"]["namespace"] == NAMESPACE
    secret = {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["apiserver-serving-cert"]}
    assert role["rules"] == [
        {**secret, "verbs": ["get", "update"]},
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
    ]
    assert objects[("RoleBinding", f"{PREFIX}apiserver-certificates-rolebinding")]["subjects"] == [account]
    cluster_role = objects[("ClusterRole", f"{PREFIX}apiserver-certificates-role")]
    assert cluster_role["rules"] == [
        {
            "apiGroups": ["apiregistration.k8s.io"],
            "resources": ["apiservices"],
            "resourceNames": ["v1alpha1.wardle.example.com", "v1beta1.wardle.example.com"],
            "verbs": ["get", "patch", "update"],
        }
    ]
    binding = objects[("ClusterRoleBinding", f"{PREFIX}apiserver-certificates-rolebinding")]
    assert binding["roleRef"]["name"] == f"{PREFIX}apiserver-certificates-role" and binding["subjects"] == [account]


def test_cert_manager_stays_the_default(project: Path, pyop, kubectl: str) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, "--certificates", "cert-manager", cwd=project))
    assert "certificates:" not in (project / "PROJECT").read_text()
    assert (project / "config/apiserver/certificate.yaml").is_file()
    assert not (project / "config/apiserver/certificates_role.yaml").exists()


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (
            (),
            ("create", "apiserver", *FLUNDER, "--certificates", "vault"),
            "invalid --certificates 'vault': use one of cert-manager, pyop",
        ),
        (
            (("create", "apiserver", *FLUNDER, "--certificates", "pyop"),),
            ("create", "apiserver", *FORTUNE, "--certificates", "cert-manager"),
            "invalid --certificates 'cert-manager': the project's aggregated API server is deployed with pyop",
        ),
        (
            (("create", "api", *CAPTAIN), ("create", "webhook", *CAPTAIN, "--defaulting")),
            ("create", "apiserver", *FLUNDER, "--certificates", "pyop"),
            "invalid --certificates 'pyop': the project's webhooks are deployed with cert-manager",
        ),
        (
            (("create", "api", *CAPTAIN), ("create", "apiserver", *FLUNDER)),
            ("create", "webhook", *CAPTAIN, "--defaulting", "--certificates", "pyop"),
            "invalid --certificates 'pyop': the project's aggregated API server is deployed with cert-manager",
        ),
    ],
    ids=["bad-value", "switch-after-apiserver", "pyop-after-cert-manager-webhooks", "webhook-switch-after-apiserver"],
)
def test_bad_certificates_are_one_line_exit_2_nothing_written(  # type: ignore[no-untyped-def]
    project: Path, pyop, setup: tuple[tuple[str, ...], ...], args: tuple[str, ...], message: str
) -> None:
    for step in setup:
        ok(pyop(*step, cwd=project))
    before = _snapshot(project)
    result = pyop(*args, cwd=project)
    assert result.exit_code == 2
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], lines
    assert _snapshot(project) == before


def test_edit_chooses_for_the_aggregated_server_too(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    """`pyop edit --certificates` is the project's one choice: its help says so, the next `create apiserver` takes it
    and, once the server is deployed, a switch is refused naming the aggregated server, with nothing written."""
    help_text = " ".join(ok(pyop("edit", "--help", cwd=project)).stdout.split())
    assert "webhooks and aggregated API servers" in help_text and "`create apiserver`" in help_text
    ok(pyop("edit", "--certificates=pyop", cwd=project))
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    assert (project / "config/apiserver/certificates_role.yaml").is_file()
    assert not (project / "config/apiserver/certificate.yaml").exists()
    before = _snapshot(project)
    result = pyop("edit", "--certificates=cert-manager", cwd=project)
    assert result.exit_code == 2
    assert "the project's aggregated API server is deployed with pyop certificates" in result.stdout + result.stderr
    assert _snapshot(project) == before


def test_a_pyop_certificates_project_passes_make_lint_and_make_test(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, "--certificates", "pyop", cwd=project))
    run = _make(project, "lint", "test")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    # The third test: the server's own certificate, its CA injected into the APIService, through the aggregator.
    assert "test_apiserver_wardle_v1alpha1_flunder.py ..." in run.stdout
    assert " failed" not in run.stdout
