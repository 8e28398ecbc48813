"""The generated built-in models (`pyop.api.k8s`): up to date, registered, lazy, faithful to the wire names."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

import pyop.api.k8s
from pyop.api import Condition, ObjectMeta
from pyop.api.k8s import KUBERNETES_VERSION
from pyop.api.k8s._index import ROOT_KINDS
from pyop.api.k8s.apps.v1 import Deployment, DeploymentSpec
from pyop.api.k8s.core.v1 import ConfigMap, Container, PodStatus
from pyop.api.k8s.meta.v1 import LabelSelector
from pyop.client.resources import BUILTIN, resource_for_model
from pyop_scaffold.codegen import k8s_models

PACKAGE_DIR = Path(pyop.api.k8s.__file__).parent


def test_committed_models_are_what_the_generator_writes() -> None:
    """Regenerate with `python -m pyop_scaffold.codegen.k8s_models pyop/api/k8s` when this fails."""
    files = k8s_models.generate(KUBERNETES_VERSION)
    assert k8s_models.differences(files, PACKAGE_DIR) == []


def test_generation_is_deterministic() -> None:
    assert k8s_models.generate(KUBERNETES_VERSION) == k8s_models.generate(KUBERNETES_VERSION)


def test_check_mode_reports_a_stale_package(tmp_path: Path) -> None:
    target = tmp_path / "k8s"
    assert k8s_models.main(["--kubernetes-version", KUBERNETES_VERSION, str(target)]) == 0
    assert k8s_models.main(["--check", "--kubernetes-version", KUBERNETES_VERSION, str(target)]) == 0
    (target / "apps" / "v1" / "_deployment.py").write_text("# edited\n")
    (target / "apps" / "v1" / "_leftover.py").write_text("# from an older generation\n")
    assert k8s_models.differences(k8s_models.generate(KUBERNETES_VERSION), target) == [
        "apps/v1/_deployment.py",
        "apps/v1/_leftover.py",
    ]
    assert k8s_models.main(["--check", "--kubernetes-version", KUBERNETES_VERSION, str(target)]) == 1
    # A rewrite leaves exactly the generated files: the leftover of an older generation is gone.
    assert k8s_models.main(["--kubernetes-version", KUBERNETES_VERSION, str(target)]) == 0
    assert not (target / "apps" / "v1" / "_leftover.py").exists()


def test_an_unknown_kubernetes_version_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert k8s_models.main(["--kubernetes-version", "1.2", str(tmp_path / "k8s")]) == 2
    error = capsys.readouterr().err
    assert "'1.2'" in error and KUBERNETES_VERSION in error
    assert not (tmp_path / "k8s").exists()


def test_every_root_kind_is_registered_without_register_model() -> None:
    assert len(ROOT_KINDS) > 90
    for group, version, kind, plural, namespaced, package in ROOT_KINDS:
        model = getattr(importlib.import_module(f"pyop.api.k8s.{package}"), kind)
        resource = resource_for_model(model)
        assert (resource.group, resource.version, resource.kind) == (group, version, kind)
        assert (resource.plural, resource.namespaced) == (plural, namespaced)
        api_version = f"{group}/{version}" if group else version
        assert BUILTIN[f"{api_version}/{kind}"] == resource
        assert model().to_dict()["apiVersion"] == api_version


@pytest.mark.parametrize(
    ("api_version", "kind", "plural", "namespaced"),
    [
        ("v1", "Namespace", "namespaces", False),
        ("v1", "Endpoints", "endpoints", True),
        ("networking.k8s.io/v1", "Ingress", "ingresses", True),
        ("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", True),
        ("storage.k8s.io/v1", "StorageClass", "storageclasses", False),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False),
        ("apiregistration.k8s.io/v1", "APIService", "apiservices", False),
        ("events.k8s.io/v1", "Event", "events", True),
    ],
)
def test_rest_mappings_are_the_api_servers(api_version: str, kind: str, plural: str, namespaced: bool) -> None:
    resource = BUILTIN[f"{api_version}/{kind}"]
    assert (resource.plural, resource.namespaced) == (plural, namespaced)


def test_importing_one_kind_loads_only_the_types_it_refers_to() -> None:
    code = (
        "import sys, json\n"
        "from pyop.api.k8s.core.v1 import ConfigMap\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('pyop.api.k8s.'))))\n"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    # ConfigMap refers to ObjectMeta only (pyop.api.model's); no other type module is imported.
    assert loaded == ["pyop.api.k8s.core", "pyop.api.k8s.core.v1", "pyop.api.k8s.core.v1._config_map"]


def test_meta_types_are_pyops_own_models() -> None:
    from pyop.api.k8s.meta import v1 as meta

    assert meta.ObjectMeta is ObjectMeta and meta.Condition is Condition
    assert Deployment.model_fields["metadata"].annotation is ObjectMeta
    assert DeploymentSpec.model_fields["selector"].annotation == LabelSelector | None


def test_irregular_wire_names_are_kept() -> None:
    status = PodStatus.model_validate({"podIPs": [{"ip": "10.0.0.1"}], "hostIPs": [{"ip": "10.1.0.1"}]})
    assert status.pod_ips is not None and status.pod_ips[0].ip == "10.0.0.1"
    assert PodStatus(pod_ips=[{"ip": "10.0.0.2"}]).to_dict() == {"podIPs": [{"ip": "10.0.0.2"}]}  # type: ignore[list-item]
    from pyop.api.k8s.apiextensions.v1 import JSONSchemaProps

    schema = JSONSchemaProps.model_validate(
        {"$ref": "#/x", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "not": {}}
    )
    assert schema.ref == "#/x" and schema.x_kubernetes_list_type == "map" and schema.not_ is not None
    assert schema.to_dict() == {
        "$ref": "#/x",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "not": {},
    }


def test_sized_integers_are_checked() -> None:
    with pytest.raises(ValueError, match="int32"):
        DeploymentSpec(replicas=2**31)


def test_list_types_and_map_keys_are_metadata() -> None:
    assert Container.__k8s_list_map_keys__["ports"] == ("containerPort", "protocol")
    assert Container.__k8s_list_types__["ports"] == "map"
    assert Container.__k8s_definition__ == "io.k8s.api.core.v1.Container"


def test_required_fields_are_required_and_others_are_not_defaulted() -> None:
    with pytest.raises(ValueError, match="name"):
        Container()  # type: ignore[call-arg]
    # No model default: a Deployment built with only metadata writes only metadata.
    assert Deployment(metadata=ObjectMeta(name="web")).to_dict() == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
    }


def test_undeclared_fields_round_trip_unchanged() -> None:
    wire = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "someFutureField": {"a": [1, 2]}},
        "data": {"k": "v"},
        "newTopLevel": True,
    }
    config_map = ConfigMap.model_validate(wire)
    assert config_map.to_dict() == wire
    assert config_map.model_extra == {"newTopLevel": True}


def test_times_are_datetimes_written_as_the_api_server_writes_them() -> None:
    meta = ObjectMeta.model_validate(
        {"creationTimestamp": "2024-05-01T10:20:30Z", "deletionTimestamp": "2024-05-01T12:20:30+02:00"}
    )
    assert meta.creation_timestamp == datetime(2024, 5, 1, 10, 20, 30, tzinfo=UTC)
    condition = Condition(type="Ready", status="True", reason="R", last_transition_time=meta.creation_timestamp)
    assert meta.deletion_timestamp is not None and meta.deletion_timestamp == condition.last_transition_time
    assert meta.creation_timestamp <= condition.last_transition_time  # comparable: both datetimes
    assert meta.to_dict() == {"creationTimestamp": "2024-05-01T10:20:30Z", "deletionTimestamp": "2024-05-01T10:20:30Z"}
    from pyop.api.k8s.events.v1 import Event

    event = Event.model_validate({"eventTime": "2024-05-01T10:20:30.000123Z", "reportingController": "x"})
    assert event.to_dict()["eventTime"] == "2024-05-01T10:20:30.000123Z"


def test_a_crd_field_of_a_generated_type_embeds_kubernetes_schema_like_the_alias_does() -> None:
    from pyop.api import KubeModel
    from pyop.api.builtin_types import PodTemplateSpec as TemplateAlias
    from pyop.api.k8s.core.v1 import PodTemplateSpec
    from pyop_scaffold.manifests.builtin import builtin_schema
    from pyop_scaffold.manifests.crd.schema import SchemaBuilder

    class WithModel(KubeModel):
        template: PodTemplateSpec

    class WithAlias(KubeModel):
        template: TemplateAlias

    embedded = SchemaBuilder(builtin_schema).model_schema(WithModel)
    assert embedded == SchemaBuilder(builtin_schema).model_schema(WithAlias)
    assert "containers" in embedded["properties"]["template"]["properties"]["spec"]["properties"]
