"""The generated descriptor table: fresh for the Go binaries it came from, and what it says about Kubernetes' types.

The table is read from kubectl 1.32 (gogo FileDescriptorProtos) and Helm 4.1 (client-go 1.35, whose binary has no
descriptors: its Go types' protobuf struct tags are read instead); each message comes from the newest binary.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyop.api.definitions import load_definitions
from pyop.apiserver.endpoints.protobuf import _descriptors as table
from pyop.apiserver.endpoints.protobuf.schema import message_for_kind, message_spec
from pyop_scaffold.codegen import protobuf_descriptors
from pyop_scaffold.codegen.go_binary_types import read_go_binary
from pyop_scaffold.codegen.protobuf_struct_tags import files_from_struct_tags, wanted

TARGET = Path(table.__file__)
VERSIONS = {label: version for label, version, _read, _count in table.SOURCES}


def _kubectl() -> Path:
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip(f"kubectl is not on PATH: part of the table is read from kubectl {VERSIONS['kubectl']}'s binary")
    return Path(found)


def _source_of_the_table(path: Path, label: str) -> protobuf_descriptors.Source:
    source = protobuf_descriptors.read_binary(path)
    if source.version != VERSIONS[label]:
        pytest.skip(f"the table came from {label} {VERSIONS[label]}; {path} links client-go {source.version}")
    return source


def test_the_table_is_what_the_generator_writes_from_kubectl_and_helm(helm: str) -> None:
    """`helm`: $PYOP_HELM, PATH or scripts/get-helm.sh (CI installs it; elsewhere a skip says why it is absent)."""
    kubectl = _kubectl()
    sources = [_source_of_the_table(kubectl, "kubectl"), _source_of_the_table(Path(helm), "helm")]
    command = [sys.executable, "-m", "pyop_scaffold.codegen.protobuf_descriptors", "--check"]
    result = subprocess.run(
        [*command, "--binary", str(kubectl), "--binary", helm, str(TARGET)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert protobuf_descriptors.render_sources(sources) == protobuf_descriptors.render_sources(sources[::-1])
    assert protobuf_descriptors.render_sources(sources) == TARGET.read_text(encoding="utf-8")  # deterministic


def test_struct_tags_rebuild_the_descriptors_kubectl_embeds() -> None:
    """The Go struct-tag reader (Helm's only source) gives kubectl 1.32's own FileDescriptorProtos back: the same
    table for every message but the three that marshal themselves (Time, MicroTime, Quantity) and metav1.Patch."""
    kubectl = _kubectl()
    descriptors = protobuf_descriptors.read_binary(kubectl)
    assert descriptors.read == "FileDescriptorProtos"
    tags = protobuf_descriptors.Source(
        "tags", descriptors.version, "Go struct tags", tuple(files_from_struct_tags(read_go_binary(kubectl, wanted)))
    )
    older = protobuf_descriptors.Source("older", "v1.0.0", descriptors.read, descriptors.files)
    from_tags = protobuf_descriptors.render_sources([tags, older])
    from_descriptors = protobuf_descriptors.render_sources([descriptors])
    assert from_tags.split("\nMESSAGES:", 1)[1] == from_descriptors.split("\nMESSAGES:", 1)[1]
    _messages, origin, _files = protobuf_descriptors.merge([tags, older])
    assert sorted(name for name, source in origin.items() if source is older) == [
        "k8s.io.apimachinery.pkg.api.resource.Quantity",
        "k8s.io.apimachinery.pkg.api.resource.QuantityValue",
        "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime",
        "k8s.io.apimachinery.pkg.apis.meta.v1.Patch",
        "k8s.io.apimachinery.pkg.apis.meta.v1.Time",
    ]


def test_a_binary_without_descriptors_or_go_types_is_a_one_line_error(tmp_path: Path) -> None:
    fake = tmp_path / "kubectl"
    fake.write_bytes(b"\x7fELF not kubectl")
    target = tmp_path / "out.py"
    result = subprocess.run(
        [sys.executable, "-m", "pyop_scaffold.codegen.protobuf_descriptors", "--binary", str(fake), str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {fake} embeds no k8s.io FileDescriptorProtos and no readable Go API types (")
    assert not target.exists()


def test_the_table_records_its_sources() -> None:
    assert [(label, read) for label, _version, read, _count in table.SOURCES] == [
        ("helm", "Go struct tags"),
        ("kubectl", "FileDescriptorProtos"),
    ]
    assert VERSIONS["helm"].startswith("v1.35.") and VERSIONS["kubectl"].startswith("v1.32.")
    assert sum(count for *_rest, count in table.SOURCES) == len(table.MESSAGES)
    assert table.FILES["k8s.io/api/resource/v1/generated.proto"] == ("helm",)  # resource.k8s.io/v1 is new in 1.34
    assert table.FILES["k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto"] == ("helm", "kubectl")  # Time
    assert table.FILES["k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/generated.proto"] == ("helm",)
    assert TARGET.read_text(encoding="utf-8").startswith("# Generated by pyop_scaffold.codegen.protobuf_descriptors")


def test_every_kind_of_1_35_has_a_message_but_api_services() -> None:
    missing = set()
    for schema in load_definitions("1.35").values():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            if message_for_kind(api_version, gvk["kind"]) is None:
                missing.add((api_version, gvk["kind"]))
    assert sorted(missing) == [
        ("apiregistration.k8s.io/v1", "APIService"),  # neither binary links kube-aggregator
        ("apiregistration.k8s.io/v1", "APIServiceList"),
    ]


def test_fields_added_up_to_1_35_are_in_the_messages() -> None:
    pod_spec = {item.name: item for item in message_spec("k8s.io.api.core.v1.PodSpec").fields}
    assert pod_spec["hostnameOverride"].number == 41  # PodSpec.hostnameOverride: new in 1.34
    container = {item.name for item in message_spec("k8s.io.api.core.v1.Container").fields}
    assert "restartPolicyRules" in container  # 1.34
    status = {item.name for item in message_spec("k8s.io.api.apps.v1.DeploymentStatus").fields}
    assert "terminatingReplicas" in status  # 1.33


def test_built_in_kinds_have_messages_and_custom_ones_none() -> None:
    assert message_for_kind("apps/v1", "Deployment") == "k8s.io.api.apps.v1.Deployment"
    assert message_for_kind("v1", "Secret") == "k8s.io.api.core.v1.Secret"
    assert message_for_kind("batch/v1", "Status") == "k8s.io.apimachinery.pkg.apis.meta.v1.Status"
    assert message_for_kind("example.com/v1", "Widget") is None
    crd = message_for_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")  # Helm links apiextensions
    assert crd == "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
    assert message_for_kind("resource.k8s.io/v1", "ResourceClaim") == "k8s.io.api.resource.v1.ResourceClaim"  # 1.34


def test_go_value_fields_pointers_and_inline_embedding() -> None:
    spec = {item.name: item for item in message_spec("k8s.io.api.apps.v1.DeploymentSpec").fields}
    assert spec["replicas"].pointer and not spec["minReadySeconds"].pointer
    assert not spec["template"].pointer  # a value struct, always written
    probe = message_spec("k8s.io.api.core.v1.Probe").fields
    assert [item.name for item in probe if item.inline] == ["handler"]
    webhooks = message_spec("k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration").by_number[2]
    assert webhooks.name == "webhooks"  # the .proto says `Webhooks`


def _kinds_without_message(version: str) -> set[tuple[str, str]]:
    missing = set()
    for schema in load_definitions(version).values():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            if message_for_kind(api_version, gvk["kind"]) is None and not gvk["kind"].endswith("List"):
                missing.add((api_version, gvk["kind"]))
    return missing


def test_the_kinds_of_1_36_and_1_37_without_a_message_are_the_documented_gap() -> None:
    """docs/runtime/testing.md (Protobuf) names these; the server answers them as types without protobuf."""
    older = {("apiregistration.k8s.io/v1", "APIService")}
    assert _kinds_without_message("1.36") - older == {
        ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy"),
        ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding"),
        ("resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest"),
        ("resource.k8s.io/v1beta2", "DeviceTaintRule"),
        ("scheduling.k8s.io/v1alpha2", "PodGroup"),
        ("scheduling.k8s.io/v1alpha2", "Workload"),
    }
    assert _kinds_without_message("1.37") - older == {
        ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy"),
        ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding"),
        ("certificates.k8s.io/v1", "ClusterTrustBundle"),
        ("certificates.k8s.io/v1", "PodCertificateRequest"),
        ("lifecycle.k8s.io/v1alpha1", "Eviction"),
        ("lifecycle.k8s.io/v1alpha1", "EvictionRequest"),
        ("resource.k8s.io/v1", "DeviceTaintRule"),
        ("resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest"),
        ("resource.k8s.io/v1beta2", "DeviceTaintRule"),
        ("scheduling.k8s.io/v1alpha3", "CompositePodGroup"),
        ("scheduling.k8s.io/v1alpha3", "PodGroup"),
        ("scheduling.k8s.io/v1alpha3", "Workload"),
        ("scheduling.k8s.io/v1beta1", "PodGroup"),
        ("scheduling.k8s.io/v1beta1", "Workload"),
        ("storagemigration.k8s.io/v1", "StorageVersionMigration"),
    }
