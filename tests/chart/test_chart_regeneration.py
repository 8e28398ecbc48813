"""Regenerating the chart (`pyop edit --plugins=helm` again, `make helm-chart`) follows config/default and keeps
what the user made of the chart: values, edited templates, added templates. Byte-identical for the same input."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from .helpers import helm_template, ok, pyop, run

CHART = Path("dist/chart")


def _files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _manager_image(helm: str, root: Path) -> str:
    objects = helm_template(helm, root, namespace="ops")
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    return str(deployment["spec"]["template"]["spec"]["containers"][0]["image"])


def _set_image(root: Path, tag: str) -> None:
    """Change the image kustomize renders, as `kustomize edit set image controller=controller:<tag>` would."""
    path = root / "config/manager/kustomization.yaml"
    data = yaml.safe_load(path.read_text())
    data["images"] = [{"name": "controller", "newName": "controller", "newTag": tag}]
    path.write_text(yaml.safe_dump(data))


def test_regeneration_is_byte_identical_and_writes_nothing(project: Callable[[str], Path]) -> None:
    first = project("sample")
    ok("edit", "--plugins=helm", cwd=first)
    before = _files(first)
    output = ok("edit", "--plugins=helm", cwd=first)
    assert "nothing changed" in output
    assert _files(first) == before
    again = first.parent / "again"
    first.rename(again)  # the same project in another folder, generated afresh
    (again / CHART).rename(again / "old-chart")
    ok("edit", "--plugins=helm", cwd=again)
    chart = {k: v for k, v in before.items() if k.startswith("dist/")}
    assert chart and {k: v for k, v in _files(again).items() if k.startswith("dist/")} == chart


def test_user_values_and_templates_are_kept_while_the_rest_follows_config(
    project: Callable[[str], Path], helm: str
) -> None:
    root = project("sample")
    ok("edit", "--plugins=helm", cwd=root)
    values = root / CHART / "values.yaml"
    text = values.read_text()
    assert "  replicas: 1\n" in text
    values.write_text(text.replace("  replicas: 1\n", "  replicas: 3  # two spares in production\n"))
    role = root / CHART / "templates/rbac/manager-role.yaml"
    role.write_text(role.read_text().replace("rules:\n", "# reviewed by security\nrules:\n"))
    mine = root / CHART / "templates/extra/settings.yaml"
    mine.parent.mkdir()
    mine.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n")
    _set_image(root, "v2")
    ok("create", "api", "--group", "crew", "--version", "v1", "--kind", "Mate", cwd=root)
    ok("make", "manifests", cwd=root)

    output = ok("edit", "--plugins=helm", cwd=root)

    merged = values.read_text()
    assert "  replicas: 3  # two spares in production\n" in merged
    assert yaml.safe_load(merged)["manager"]["image"]["tag"] == "v2"  # left alone by the user: follows config
    assert "# reviewed by security\n" in role.read_text()
    assert "templates/rbac/manager-role.yaml: kept as you edited it" in output
    assert mine.read_text().endswith("mode: fast\n")
    assert (root / CHART / "templates/crd/mates.crew.example.com.yaml").is_file()
    objects = helm_template(helm, root, namespace="ops")
    assert {"settings", "mates.crew.example.com"} <= {o["metadata"]["name"] for o in objects}
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    assert deployment["spec"]["replicas"] == 3
    assert _manager_image(helm, root) == "controller:v2"
    run(helm, "lint", "--strict", str(root / CHART))

    again = _files(root)
    ok("edit", "--plugins=helm", cwd=root)  # a merged values.yaml is stable
    assert _files(root) == again

    ok("edit", "--plugins=helm", "--force", cwd=root)
    assert "# reviewed by security" not in role.read_text()
    assert "  replicas: 1\n" in values.read_text()
    assert mine.is_file()  # --force replaces generated files only


def test_a_changed_crd_reaches_the_chart_as_a_template_helm_upgrade_applies(
    project: Callable[[str], Path], helm: str
) -> None:
    """Helm never upgrades files under crds/; the chart's CRDs are templates, so an upgrade applies a new schema."""
    root = project("sample")
    ok("edit", "--plugins=helm", cwd=root)
    assert not (root / CHART / "crds").exists()
    types = root / "sample/api/crew/v1/captain_types.py"
    types.write_text(types.read_text().replace("    foo: str | None = None\n", "    foo: str | None = None\n"
                                                "    # +optional\n    ship_name: str | None = None\n"))  # fmt: skip
    ok("make", "manifests", cwd=root)
    ok("edit", "--plugins=helm", cwd=root)
    objects = helm_template(helm, root, namespace="ops")
    (crd,) = [o for o in objects if o["metadata"]["name"] == "captains.crew.example.com"]
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert "shipName" in spec and "foo" in spec
    assert crd["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"


def test_a_user_value_change_wins_over_a_config_change_of_the_same_value(
    project: Callable[[str], Path], helm: str
) -> None:
    root = project("sample")
    ok("edit", "--plugins=helm", cwd=root)
    values = root / CHART / "values.yaml"
    values.write_text(values.read_text().replace("    tag: latest\n", "    tag: pinned\n"))
    _set_image(root, "v3")
    ok("edit", "--plugins=helm", cwd=root)
    assert _manager_image(helm, root) == "controller:pinned"


def test_a_template_the_user_deleted_is_not_made_again(project: Callable[[str], Path], helm: str) -> None:
    root = project("sample")
    ok("edit", "--plugins=helm", cwd=root)
    dropped = root / CHART / "templates/network-policy/allow-metrics-traffic.yaml"
    dropped.unlink()
    output = ok("edit", "--plugins=helm", cwd=root)
    assert "templates/network-policy/allow-metrics-traffic.yaml: not made again, you deleted it" in output
    assert not dropped.exists()
    names = {o["metadata"]["name"] for o in helm_template(helm, root, namespace="ops")}
    assert "sample-allow-metrics-traffic" not in names and "sample-allow-webhook-traffic" in names
    ok("edit", "--plugins=helm", "--force", cwd=root)
    assert dropped.is_file()


def test_a_template_config_no_longer_renders_is_named(project: Callable[[str], Path]) -> None:
    root = project("sample")
    ok("edit", "--plugins=helm", cwd=root)
    crds = root / "config/crd/kustomization.yaml"
    crds.write_text(crds.read_text().replace("- bases/ship.example.com_frigates.yaml\n", ""))
    output = ok("edit", "--plugins=helm", cwd=root)
    assert "templates/crd/frigates.ship.example.com.yaml: config/default no longer renders" in output


@pytest.fixture
def no_kubectl() -> Iterator[None]:
    saved = os.environ.get("KUBECTL")
    os.environ["KUBECTL"] = "/nonexistent/kubectl"
    try:
        yield
    finally:
        if saved is None:
            del os.environ["KUBECTL"]
        else:
            os.environ["KUBECTL"] = saved


def test_without_kubectl_nothing_is_written(project: Callable[[str], Path], no_kubectl: None) -> None:
    root = project("sample")
    before = _files(root)
    code, output = pyop("edit", "--plugins=helm", "--namespaced", cwd=root)
    assert code == 2
    assert output.strip().splitlines() == [output.strip()]
    assert "kubectl kustomize" in output
    assert _files(root) == before


def test_a_kustomize_error_is_one_line_naming_project_paths(project: Callable[[str], Path]) -> None:
    root = project("sample")
    kustomization = root / "config/default/kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("- ../rbac\n", "- ../rbacx\n"))
    before = _files(root)
    code, output = pyop("edit", "--plugins=helm", cwd=root)
    assert code == 2
    assert output.startswith("Error: kubectl kustomize config/default failed: ")
    assert "config/rbacx" in output and "pyop-chart-" not in output
    assert len(output.strip().splitlines()) == 1
    assert _files(root) == before


def test_a_broken_values_file_is_named_and_nothing_is_written(project: Callable[[str], Path]) -> None:
    root = project("sample")
    ok("edit", "--plugins=helm", cwd=root)
    values = root / CHART / "values.yaml"
    values.write_text("manager: [unclosed\n")
    before = _files(root)
    code, output = pyop("edit", "--plugins=helm", cwd=root)
    assert code == 2
    assert "dist/chart/values.yaml" in output and "not valid YAML" in output
    assert _files(root) == before


def test_namespaced_and_helm_in_one_edit_make_the_namespaced_chart(project: Callable[[str], Path], helm: str) -> None:
    root = project("sample")
    ok("edit", "--namespaced", "--plugins=helm", cwd=root)
    objects = helm_template(helm, root, namespace="team-a")
    kinds = {(o["kind"], o["metadata"]["name"]) for o in objects}
    assert ("Role", "sample-manager-role") in kinds
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    assert "WATCH_NAMESPACE" in {e["name"] for e in env}
    project_file = yaml.safe_load((root / "PROJECT").read_text())
    assert project_file["namespaced"] is True
    assert project_file["plugins"]["helm.pyop.io/v2-alpha"] == {"manifests": "config/default", "output": "dist/chart"}
