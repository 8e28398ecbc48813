"""The chart renders what the kustomize installer renders, passes `helm lint --strict`, and every object it renders
is valid for the Kubernetes API (kubernetes-validate, strict)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from pyop_scaffold.chart.compare import by_key, differences, kustomize_side

from .helpers import helm_template, kustomize, namespace_of, ok, run

# Kinds of operators the cluster must have; kubernetes-validate has no schema of theirs.
NOT_BUILT_IN = {"cert-manager.io", "monitoring.coreos.com"}


@pytest.mark.parametrize("name", ["sample", "namespaced", "conversion"])
def test_helm_template_renders_the_objects_kustomize_renders(
    name: str, project: Callable[[str], Path], helm: str, kubectl: str
) -> None:
    root = project(name)
    ok("edit", "--plugins=helm", cwd=root)
    namespace = namespace_of(root)
    expected = kustomize_side(kustomize(kubectl, root))
    rendered = by_key(helm_template(helm, root, namespace=namespace))
    assert sorted(rendered) == sorted(expected)
    for key, obj in expected.items():
        assert rendered[key] == obj, key
    assert differences(kustomize(kubectl, root), helm_template(helm, root, namespace=namespace)) == []


def test_a_chart_that_drifted_from_kustomize_is_told_apart(
    project: Callable[[str], Path], helm: str, kubectl: str
) -> None:
    root = project("sample")
    ok("edit", "--plugins=helm", cwd=root)
    crds = root / "config/crd/kustomization.yaml"
    crds.write_text(crds.read_text().replace("- bases/ship.example.com_frigates.yaml\n", ""))
    kustomized = kustomize(kubectl, root)
    templated = helm_template(helm, root, "--set", "manager.replicas=2", namespace=namespace_of(root))
    found = differences(kustomized, templated)
    assert (
        found[0] == "only in helm template: apiextensions.k8s.io/v1/CustomResourceDefinition//frigates.ship.example.com"
    )
    assert found[1].startswith("differs: apps/v1/Deployment/sample-system/sample-controller-manager\n")
    assert "+  replicas: 2" in found[1]
    assert len(found) == 2


@pytest.mark.parametrize("name", ["sample", "namespaced"])
def test_the_chart_installs_into_the_release_namespace(
    name: str, project: Callable[[str], Path], helm: str, kubectl: str
) -> None:
    root = project(name)
    ok("edit", "--plugins=helm", cwd=root)
    namespace = namespace_of(root)
    objects = helm_template(helm, root, namespace="elsewhere")
    namespaced = [o for o in objects if "namespace" in o["metadata"]]
    assert namespaced and all(o["metadata"]["namespace"] == "elsewhere" for o in namespaced)
    for obj in objects:
        if obj["kind"] != "CustomResourceDefinition":  # a CRD's descriptions are the user's prose
            assert namespace not in repr(obj), obj["metadata"]["name"]
    subjects = [s for o in objects for s in o.get("subjects") or () if s.get("kind") == "ServiceAccount"]
    assert subjects and {s["namespace"] for s in subjects} == {"elsewhere"}


def test_an_object_the_user_added_to_config_default_is_in_the_chart_as_rendered(
    project: Callable[[str], Path], helm: str, kubectl: str
) -> None:
    root = project("sample")
    (root / "config/default/settings.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
        "data:\n  endpoint: 'https://{{ not a helm action }}.example.com'\n"
    )
    kustomization = root / "config/default/kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("- ../rbac\n", "- ../rbac\n- settings.yaml\n", 1))
    ok("edit", "--plugins=helm", cwd=root)
    assert (root / "dist/chart/templates/other/settings.yaml").is_file()
    namespace = namespace_of(root)
    assert differences(kustomize(kubectl, root), helm_template(helm, root, namespace=namespace)) == []
    (settings,) = [o for o in helm_template(helm, root, namespace="x") if o["kind"] == "ConfigMap"]
    assert settings["metadata"]["namespace"] == "x"
    assert settings["data"]["endpoint"] == "https://{{ not a helm action }}.example.com"


def test_a_chart_with_pyop_made_webhook_certificates(
    pyop_certificates_project: Path, tmp_path: Path, helm: str, kubectl: str
) -> None:
    root = tmp_path / "harbour"
    shutil.copytree(pyop_certificates_project, root, symlinks=True)
    ok("edit", "--plugins=helm", cwd=root)
    namespace = namespace_of(root)
    kustomized = kustomize(kubectl, root)
    assert not [o for o in kustomized if str(o["apiVersion"]).startswith("cert-manager.io/")]
    assert differences(kustomized, helm_template(helm, root, namespace=namespace)) == []
    run(helm, "lint", "--strict", str(root / "dist" / "chart"))
    values = (root / "dist/chart/values.yaml").read_text()
    assert "certManager:" not in values and "webhook:" in values
    off = helm_template(helm, root, "--set", "webhook.enable=false", namespace=namespace)
    assert not [o for o in off if "webhook" in o["metadata"]["name"]]
    checked, unknown = _validate(helm_template(helm, root, namespace=namespace))
    assert checked >= 10 and not unknown


def test_namespaced_project_chart_grants_a_role_in_the_release_namespace(
    project: Callable[[str], Path], helm: str
) -> None:
    root = project("namespaced")
    ok("edit", "--plugins=helm", cwd=root)
    objects = helm_template(helm, root, namespace="team-a")
    kinds = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    assert ("Role", "webshop-manager-role") in kinds and ("ClusterRole", "webshop-manager-role") not in kinds
    assert kinds[("Role", "webshop-manager-role")]["metadata"]["namespace"] == "team-a"
    assert kinds[("RoleBinding", "webshop-manager-rolebinding")]["roleRef"]["kind"] == "Role"


@pytest.mark.parametrize("name", ["sample", "namespaced", "conversion"])
def test_helm_lint_strict_passes(name: str, project: Callable[[str], Path], helm: str) -> None:
    root = project(name)
    ok("edit", "--plugins=helm", cwd=root)
    result = run(helm, "lint", "--strict", str(root / "dist" / "chart"))
    assert "0 chart(s) failed" in result.stdout
    assert "[WARNING]" not in result.stdout and "[ERROR]" not in result.stdout


@pytest.mark.parametrize(
    ("name", "values"),
    [("sample", ()), ("sample", ("--set", "prometheus.enable=true")), ("namespaced", ())],
    ids=["sample", "sample-with-servicemonitor", "namespaced"],
)
def test_every_rendered_object_passes_strict_kubernetes_validation(
    name: str, values: tuple[str, ...], project: Callable[[str], Path], helm: str
) -> None:
    root = project(name)
    ok("edit", "--plugins=helm", cwd=root)
    objects = helm_template(helm, root, *values, namespace="operators")
    checked, unknown = _validate(objects)
    assert checked >= 10
    assert unknown <= {(o["apiVersion"], o["kind"]) for o in objects if _group(o) in NOT_BUILT_IN}
    if values:
        assert ("monitoring.coreos.com/v1", "ServiceMonitor") in unknown


def test_kubernetes_validate_strict_cli_passes_the_rendered_chart(
    project: Callable[[str], Path], helm: str, tmp_path: Path
) -> None:
    root = project("sample")
    ok("edit", "--plugins=helm", cwd=root)
    rendered = tmp_path / "chart.yaml"
    chart = str(root / "dist" / "chart")
    rendered.write_text(run(helm, "template", "r", chart, "-n", "ops", "--set", "prometheus.enable=true").stdout)
    cli = Path(sys.executable).with_name("kubernetes-validate")
    result = run(str(cli), "--strict", "--quiet", "--kubernetes-version", "1.37", str(rendered), check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = (result.stdout + result.stderr).splitlines()
    assert lines and all(line.startswith("WARN ") and "Couldn't find schema for kind" in line for line in lines)
    assert {line.split(" with api version ")[1].split("/")[0] for line in lines} <= NOT_BUILT_IN
    broken = tmp_path / "broken.yaml"
    broken.write_text(rendered.read_text().replace("  replicas: 1\n", "  replicas: one\n"))
    assert run(str(cli), "--strict", "--quiet", str(broken), check=False).returncode == 1


def _validate(objects: list[dict[str, Any]]) -> tuple[int, set[tuple[str, str]]]:
    checked, unknown = 0, set()
    for obj in objects:
        try:
            kubernetes_validate.validate(obj, "1.37", strict=True)
        except kubernetes_validate.SchemaNotFoundError:
            unknown.add((obj["apiVersion"], obj["kind"]))
            continue
        checked += 1
    return checked, unknown


def _group(obj: dict[str, Any]) -> str:
    return str(obj["apiVersion"]).rpartition("/")[0]
