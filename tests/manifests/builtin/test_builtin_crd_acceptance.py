"""A CRD that embeds built-in schemas passes every offline check we have: the API server's structural rules,
kubernetes-validate's CRD schema, kubectl's YAML handling, and it accepts real objects while rejecting bad ones."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from pyop_scaffold.manifests.builtin import PINNED_KUBERNETES_VERSION, builtin_schema

CORE = "io.k8s.api.core.v1."
META = "io.k8s.apimachinery.pkg.apis.meta.v1."


def field(definition: str, description: str, **options: Any) -> dict[str, Any]:
    """What the generator does for a field typed with a built-in: the type's schema plus the field's doc."""
    return {**builtin_schema(definition, **options), "description": description}


def backup_crd(*, embedded_object_meta: bool = False) -> dict[str, Any]:
    spec = {
        "type": "object",
        "description": "BackupSpec defines the desired state of Backup.",
        "properties": {
            "template": field(
                CORE + "PodTemplateSpec", "Pod that runs the backup.", embedded_object_meta=embedded_object_meta
            ),
            "resources": field(CORE + "ResourceRequirements", "Resources of the backup pod."),
            "retention": field(META + "Duration", "How long backups are kept."),
            "maxUnavailable": field("io.k8s.apimachinery.pkg.util.intstr.IntOrString", "Count or percentage."),
            "selector": field(META + "LabelSelector", "Which volumes to back up."),
            "imagePullSecrets": {
                "type": "array",
                "items": builtin_schema(CORE + "LocalObjectReference"),
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            },
        },
        "required": ["template"],
    }
    status = {
        "type": "object",
        "properties": {
            "conditions": {
                "type": "array",
                "items": builtin_schema(META + "Condition"),
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["type"],
            },
            "lastRun": field(META + "Time", "When the last backup started."),
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "backups.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Backup", "listKind": "BackupList", "plural": "backups", "singular": "backup"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": "Backup is the Schema for the backups API.",
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": spec,
                                "status": status,
                            },
                        }
                    },
                }
            ],
        },
    }


POD_TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "backup"}},
    "spec": {
        "restartPolicy": "OnFailure",
        "imagePullSecrets": [{"name": "registry"}],
        "containers": [
            {
                "name": "restic",
                "image": "restic/restic:0.17",
                "args": ["backup", "/data"],
                "ports": [{"containerPort": 9090, "name": "metrics"}],
                "env": [
                    {"name": "RESTIC_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "restic", "key": "password"}}}
                ],
                "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": 0}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": "metrics"}, "periodSeconds": 10},
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            }
        ],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
        "tolerations": [{"key": "backup", "operator": "Exists", "effect": "NoSchedule"}],
    },
}


def backup_object() -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Backup",
        "metadata": {"name": "nightly", "namespace": "default"},
        "spec": {
            "template": copy.deepcopy(POD_TEMPLATE),
            "resources": {"requests": {"memory": "1Gi"}},
            "retention": "720h",
            "maxUnavailable": "25%",
            "selector": {"matchLabels": {"backup": "yes"}},
        },
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Succeeded",
                    "message": "",
                    "lastTransitionTime": "2024-05-01T10:20:30Z",
                    "observedGeneration": 3,
                }
            ],
            "lastRun": "2024-05-01T10:00:00Z",
        },
    }


def open_api_schema(crd: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


@pytest.mark.parametrize("embedded_object_meta", [False, True])
def test_crd_passes_the_offline_acceptance_check(embedded_object_meta: bool) -> None:
    from pyop_scaffold.manifests.acceptance import check_crd

    assert check_crd(backup_crd(embedded_object_meta=embedded_object_meta)) == []


def test_crd_passes_kubernetes_validate_in_strict_mode() -> None:
    kubernetes_validate.validate(backup_crd(), PINNED_KUBERNETES_VERSION, strict=True)


def test_kubernetes_validate_strict_mode_would_catch_a_non_crd_keyword() -> None:
    crd = backup_crd()
    open_api_schema(crd)["properties"]["spec"]["properties"]["retention"]["examples"] = ["1h"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(crd, PINNED_KUBERNETES_VERSION, strict=True)


def test_the_sample_pod_template_is_valid_kubernetes() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "backup"},
        "spec": {"selector": {"matchLabels": {"app": "backup"}}, "template": POD_TEMPLATE},
    }
    kubernetes_validate.validate(deployment, PINNED_KUBERNETES_VERSION, strict=True)


def test_a_real_object_validates_against_the_crd_schema() -> None:
    jsonschema.Draft4Validator(open_api_schema(backup_crd())).validate(backup_object())


@pytest.mark.parametrize(
    ("where", "bad_value"),
    [
        (("spec", "template", "spec", "containers"), {"name": "not-a-list"}),
        (("spec", "template", "spec", "containers", 0, "resources", "limits", "cpu"), "lots"),
        (("spec", "template", "spec", "containers", 0, "ports", 0, "containerPort"), "9090"),
        (("spec", "template", "spec", "containers", 0, "readinessProbe", "httpGet", "port"), {"number": 1}),
        (("spec", "maxUnavailable"), 2.5),
        (("status", "conditions", 0, "status"), "Maybe"),
        (("status", "conditions", 0, "reason"), ""),
    ],
)
def test_bad_values_are_rejected_by_the_crd_schema(where: tuple[Any, ...], bad_value: Any) -> None:
    backup = backup_object()
    parent: Any = backup
    for step in where[:-1]:
        parent = parent[step]
    parent[where[-1]] = bad_value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(open_api_schema(backup_crd())).validate(backup)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_kustomize_reads_the_crd_back_unchanged(tmp_path: Path) -> None:
    crd = backup_crd()
    (tmp_path / "backups.yaml").write_text(yaml.safe_dump(crd, sort_keys=False))
    (tmp_path / "kustomization.yaml").write_text("resources:\n- backups.yaml\n")
    result = subprocess.run(
        ["kubectl", "kustomize", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KUBECONFIG": str(tmp_path / "no-cluster")},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout) == crd
