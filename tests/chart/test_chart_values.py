"""values.yaml switches parts of the chart off and on, and values.schema.json turns a bad value into an error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .helpers import helm_template, ok, run

Objects = list[dict[str, Any]]


@pytest.fixture
def sample_chart(project: Callable[[str], Path]) -> Path:
    root = project("sample")
    ok("edit", "--plugins=helm", cwd=root)
    return root


def _kinds(objects: Objects) -> set[str]:
    return {o["kind"] for o in objects}


def _names(objects: Objects) -> set[str]:
    return {o["metadata"]["name"] for o in objects}


def _manager(objects: Objects) -> dict[str, Any]:
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    return deployment


def test_each_switch_leaves_its_objects_out_and_only_those(sample_chart: Path, helm: str) -> None:
    everything = helm_template(helm, sample_chart, namespace="ops")
    off = {
        "crd": lambda o: o["kind"] == "CustomResourceDefinition",
        "webhook": lambda o: (
            o["kind"].endswith("WebhookConfiguration")
            or o["metadata"]["name"]
            in ("sample-webhook-service", "sample-allow-webhook-traffic", "sample-serving-cert")
        ),
        "certManager": lambda o: o["apiVersion"].startswith("cert-manager.io/"),
        "metrics": lambda o: "metrics" in o["metadata"]["name"],
        "networkPolicy": lambda o: o["kind"] == "NetworkPolicy",
        "rbacHelpers": lambda o: o["metadata"]["name"].endswith(("-admin-role", "-editor-role", "-viewer-role")),
        "rbac": lambda o: (
            o["metadata"]["name"] in ("sample-manager-role", "sample-manager-rolebinding")
            or "leader-election" in o["metadata"]["name"]
        ),
    }
    for switch, belongs in off.items():
        rendered = helm_template(helm, sample_chart, "--set", f"{switch}.enable=false", namespace="ops")
        gone = [o for o in everything if belongs(o)]
        assert gone, switch
        assert _names(rendered) == _names(everything) - _names(gone), switch


def test_webhooks_off_leave_no_webhook_server_in_the_manager(sample_chart: Path, helm: str) -> None:
    on = _manager(helm_template(helm, sample_chart, namespace="ops"))["spec"]["template"]["spec"]
    off = _manager(helm_template(helm, sample_chart, "--set", "webhook.enable=false", namespace="ops"))
    pod = off["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert {p["name"] for p in on["containers"][0]["ports"]} == {"health", "webhook-server"}
    assert {p["name"] for p in container["ports"]} == {"health"}
    assert [v["name"] for v in pod["volumes"]] == ["tmp"]
    assert [m["name"] for m in container["volumeMounts"]] == ["tmp"]
    assert not [a for a in container["args"] if a.startswith("--webhook-")]
    assert container["args"] == [a for a in on["containers"][0]["args"] if not a.startswith("--webhook-")]


def test_cert_manager_off_drops_the_ca_injection(sample_chart: Path, helm: str) -> None:
    objects = helm_template(helm, sample_chart, "--set", "certManager.enable=false", namespace="ops")
    webhooks = [o for o in objects if o["kind"].endswith("WebhookConfiguration")]
    assert len(webhooks) == 2
    assert all("annotations" not in o["metadata"] for o in webhooks)


def test_crds_are_kept_on_uninstall_unless_crd_keep_is_false(sample_chart: Path, helm: str) -> None:
    def policies(*args: str) -> list[str | None]:
        objects = helm_template(helm, sample_chart, *args, namespace="ops")
        crds = [o for o in objects if o["kind"] == "CustomResourceDefinition"]
        assert len(crds) == 2
        return [(o["metadata"].get("annotations") or {}).get("helm.sh/resource-policy") for o in crds]

    assert policies() == ["keep", "keep"]
    assert policies("--set", "crd.keep=false") == [None, None]


def test_prometheus_servicemonitor_is_offered_off(sample_chart: Path, helm: str) -> None:
    assert "ServiceMonitor" not in _kinds(helm_template(helm, sample_chart, namespace="ops"))
    objects = helm_template(helm, sample_chart, "--set", "prometheus.enable=true", namespace="ops")
    (monitor,) = [o for o in objects if o["kind"] == "ServiceMonitor"]
    assert monitor["metadata"] == {**monitor["metadata"], "name": "sample-controller-manager-metrics-monitor"}
    assert monitor["metadata"]["namespace"] == "ops"
    both_off = ("--set", "prometheus.enable=true", "--set", "metrics.enable=false")
    assert "ServiceMonitor" not in _kinds(helm_template(helm, sample_chart, *both_off, namespace="ops"))


def test_manager_values_reach_the_deployment(sample_chart: Path, helm: str, tmp_path: Path) -> None:
    overrides = tmp_path / "prod.yaml"
    overrides.write_text(
        "manager:\n"
        "  replicas: 3\n"
        "  image: {repository: registry.example.com/fleet/operator, tag: v1.2.3}\n"
        "  args: [--leader-elect, --zap-devel]\n"
        "  env: [{name: LOG_LEVEL, value: debug}]\n"
        "  nodeSelector: {kubernetes.io/arch: arm64}\n"
        "  tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]\n"
        "  affinity: {nodeAffinity: {}}\n"
        "  imagePullSecrets: [{name: regcred}]\n"
        "  resources: {limits: {memory: 1Gi}}\n"
    )
    deployment = _manager(helm_template(helm, sample_chart, "-f", str(overrides), namespace="ops"))
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert deployment["spec"]["replicas"] == 3
    assert container["image"] == "registry.example.com/fleet/operator:v1.2.3"
    assert container["args"][:2] == ["--leader-elect", "--zap-devel"]
    assert container["args"][2].startswith("--webhook-cert-path=")
    assert container["env"] == [{"name": "LOG_LEVEL", "value": "debug"}]
    assert container["resources"]["limits"] == {"cpu": "500m", "memory": "1Gi"}  # Helm merges maps of values
    assert pod["nodeSelector"] == {"kubernetes.io/arch": "arm64"}
    assert pod["tolerations"][0]["key"] == "dedicated"
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]
    digest = "sha256:" + "ab" * 32
    pinned = _manager(helm_template(helm, sample_chart, "--set", f"manager.image.digest={digest}", namespace="o"))
    assert pinned["spec"]["template"]["spec"]["containers"][0]["image"] == f"controller@{digest}"


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ("manager.replcas=2", "replcas"),
        ("manager.replicas=-1", "replicas"),
        ("crd.enable=yes", "enable"),
        ("webhooks.enable=false", "webhooks"),
        ("manager.image.pullPolicy=Sometimes", "pullPolicy"),
    ],
)
def test_values_schema_rejects_a_bad_value(sample_chart: Path, helm: str, setting: str, named: str) -> None:
    chart = str(sample_chart / "dist" / "chart")
    result = run(helm, "template", "release", chart, "--set", setting, check=False)
    assert result.returncode != 0
    assert "values don't meet the specifications of the schema" in result.stderr
    assert named in result.stderr
    assert run(helm, "lint", "--strict", chart, "--set", setting, check=False).returncode != 0
