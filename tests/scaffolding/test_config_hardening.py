"""What config/default deploys around the manager: NetworkPolicies by default, a ServiceMonitor that verifies the
metrics certificate when cert-manager issues it, and base images pinned by digest with `make pin-images`."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyop_scaffold.commands.lock import image_python_version


def _ok(result) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.stdout + result.stderr


def _build(kubectl: str, folder: Path) -> list[dict[str, Any]]:
    built = subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    return [d for d in yaml.safe_load_all(built.stdout) if d]


def _one(documents: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    [found] = [d for d in documents if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    return found


def _project(tmp_path: Path, pyop) -> Path:  # type: ignore[no-untyped-def]
    root = tmp_path / "op"
    root.mkdir()
    _ok(pyop("init", "--domain", "example.com", cwd=root))
    return root


def test_config_default_deploys_the_metrics_network_policy(tmp_path: Path, pyop, kubectl: str) -> None:  # type: ignore[no-untyped-def]
    documents = _build(kubectl, _project(tmp_path, pyop) / "config/default")
    policy = _one(documents, "NetworkPolicy")
    manager = _one(documents, "Deployment")
    assert policy["metadata"]["name"] == "op-allow-metrics-traffic"
    assert policy["metadata"]["namespace"] == manager["metadata"]["namespace"] == "op-system"
    labels = manager["spec"]["template"]["metadata"]["labels"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
    [rule] = policy["spec"]["ingress"]
    assert rule["ports"] == [{"port": 8443, "protocol": "TCP"}]


def test_a_project_with_webhooks_deploys_the_webhook_network_policy_too(tmp_path: Path, pyop, kubectl: str) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path, pyop)
    _ok(pyop("create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", cwd=root))
    _ok(pyop("create", "webhook", "--group", "crew", "--version", "v1", "--kind", "Captain", "--defaulting", cwd=root))
    _ok(pyop("make", "manifests", cwd=root))
    documents = _build(kubectl, root / "config/default")
    names = {d["metadata"]["name"] for d in documents if d["kind"] == "NetworkPolicy"}
    assert names == {"op-allow-metrics-traffic", "op-allow-webhook-traffic"}


def _enable_monitoring(root: Path, *, with_certificates: bool) -> None:
    """What config/default's comment says to do: `- ../prometheus`, and uncomment the component."""
    path = root / "config/default/kustomization.yaml"
    text = path.read_text().replace("- ../network-policy\n", "- ../network-policy\n- ../prometheus\n", 1)
    if with_certificates:
        text = text.replace(
            "#components:\n#- ../prometheus/cert-manager\n", "components:\n- ../prometheus/cert-manager\n"
        )
        assert "\ncomponents:\n- ../prometheus/cert-manager\n" in text
    path.write_text(text)


def test_without_a_certificate_the_service_monitor_cannot_verify_and_says_why(tmp_path: Path, pyop, kubectl) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path, pyop)
    _enable_monitoring(root, with_certificates=False)
    monitor = _one(_build(kubectl, root / "config/default"), "ServiceMonitor")
    assert monitor["spec"]["endpoints"][0]["tlsConfig"] == {"insecureSkipVerify": True}
    assert "self-signed" in (root / "config/prometheus/monitor.yaml").read_text()


def test_with_cert_manager_the_service_monitor_verifies_the_metrics_certificate(tmp_path: Path, pyop, kubectl) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path, pyop)
    _enable_monitoring(root, with_certificates=True)
    documents = _build(kubectl, root / "config/default")
    service = _one(documents, "Service", "op-controller-manager-metrics-service")
    certificate = _one(documents, "Certificate")
    issuer = _one(documents, "Issuer")
    tls = _one(documents, "ServiceMonitor")["spec"]["endpoints"][0]["tlsConfig"]
    dns = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc"
    assert tls["insecureSkipVerify"] is False and "insecureSkipVerify: true" not in yaml.safe_dump(tls)
    assert tls["serverName"] == dns and dns in certificate["spec"]["dnsNames"]
    assert tls["ca"] == {"secret": {"name": certificate["spec"]["secretName"], "key": "ca.crt"}}
    assert certificate["spec"]["issuerRef"]["name"] == issuer["metadata"]["name"]
    assert certificate["metadata"]["namespace"] == service["metadata"]["namespace"]
    pod = _one(documents, "Deployment")["spec"]["template"]["spec"]
    [volume] = [v for v in pod["volumes"] if v.get("secret", {}).get("secretName") == certificate["spec"]["secretName"]]
    [mount] = [m for m in pod["containers"][0]["volumeMounts"] if m["name"] == volume["name"]]
    assert f"--metrics-cert-path={mount['mountPath']}" in pod["containers"][0]["args"]


# --- make pin-images (no registry here: a stand-in `crane` answers with a digest) ---


def _fake_crane(folder: Path, answer: str) -> Path:
    script = folder / "crane"
    script.write_text(f'#!/bin/sh\n[ "$1" = digest ] || exit 3\necho "$2" >> "{folder}/asked"\necho "{answer}"\n')
    script.chmod(0o755)
    return script


def _make(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    return subprocess.run(["make", *args], cwd=root, capture_output=True, text=True, check=False)


def test_pin_images_pins_the_base_image_by_digest_and_refreshes_it(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path, pyop)
    first, second = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    tools = tmp_path / "tools"
    tools.mkdir()
    crane = _fake_crane(tools, first)
    assert _make(root, "pin-images", f"CRANE={crane}").returncode == 0
    dockerfile = (root / "Dockerfile").read_text()
    assert re.search(rf"^ARG BASE_IMAGE=python:3\.12-slim-bookworm@{first}$", dockerfile, re.MULTILINE)
    assert dockerfile.count("FROM ${BASE_IMAGE}") == 2
    assert image_python_version(root, None) == "3.12"  # make lock still reads the image's Python

    crane = _fake_crane(tools, second)
    assert _make(root, "pin-images", f"CRANE={crane}").returncode == 0
    assert f"ARG BASE_IMAGE=python:3.12-slim-bookworm@{second}\n" in (root / "Dockerfile").read_text()
    assert (tools / "asked").read_text().splitlines() == ["python:3.12-slim-bookworm"] * 2  # the tag, not the digest


def test_pin_images_without_a_digest_fails_and_leaves_the_dockerfile(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path, pyop)
    before = (root / "Dockerfile").read_text()
    tools = tmp_path / "tools"
    tools.mkdir()
    done = _make(root, "pin-images", f"CRANE={_fake_crane(tools, 'unauthorized')}")
    assert done.returncode != 0 and "cannot find the digest of python:3.12-slim-bookworm" in done.stderr
    assert (root / "Dockerfile").read_text() == before
