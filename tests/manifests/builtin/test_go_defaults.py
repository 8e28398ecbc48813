"""The Go `+default` markers of built-in fields, as controller-gen embeds them (issue 13 item 3)."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from pyop_scaffold.codegen import builtin_defaults
from pyop_scaffold.manifests.builtin import builtin_schema

GENERATED = Path(builtin_defaults.__file__).parent.parent / "manifests" / "builtin" / "go_defaults.py"


def test_embedded_pod_specs_carry_the_go_defaults() -> None:
    volume = builtin_schema("io.k8s.api.core.v1.PodSpec")["properties"]["volumes"]["items"]["properties"]
    assert volume["azureDisk"]["properties"]["fsType"]["default"] == "ext4"
    assert volume["azureDisk"]["properties"]["cachingMode"]["default"] == "ReadWrite"
    assert volume["rbd"]["properties"]["pool"]["default"] == "rbd"
    assert volume["rbd"]["properties"]["user"]["default"] == "admin"
    assert volume["scaleIO"]["properties"]["fsType"]["default"] == "xfs"
    # the hand-written table still applies over the generated one
    assert volume["configMap"]["properties"]["name"]["default"] == ""
    port = builtin_schema("io.k8s.api.core.v1.ContainerPort")
    assert port["properties"]["protocol"]["default"] == "TCP"
    assert "default" not in volume["azureDisk"]["properties"]["diskName"]


def test_the_generator_reads_literal_defaults_of_api_types_only(tmp_path: Path) -> None:
    module = tmp_path / "api_v1" / "io" / "k8s" / "api" / "core" / "v1.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        textwrap.dedent(
            """
            from dataclasses import dataclass, field
            from typing import ClassVar

            @dataclass
            class Volume:
                fsType: str | None = "ext4"
                name: str | None = ""
                size: int | None = None
                readOnly: bool | None = False
                from_: str | None = field(default="here", metadata={"original_name": "from"})

            @dataclass
            class Thing:
                apiVersion: str = "v1"
                kind: str = "Thing"
                plural_: ClassVar[str] = "things"
                replicas: int | None = 1
            """
        )
    )
    assert builtin_defaults.collect(tmp_path) == {
        ("io.k8s.api.core.v1.Volume", "fsType"): "ext4",
        ("io.k8s.api.core.v1.Volume", "readOnly"): False,
        ("io.k8s.api.core.v1.Volume", "from"): "here",
        ("io.k8s.api.core.v1.Thing", "replicas"): 1,
    }


def test_two_sources_disagreeing_on_a_default_is_an_error(tmp_path: Path) -> None:
    for folder, value in (("api_v1", '"ext4"'), ("apis_apps_v1", '"xfs"')):
        module = tmp_path / folder / "io" / "k8s" / "api" / "core" / "v1.py"
        module.parent.mkdir(parents=True)
        module.write_text(f"class Volume:\n    fsType: str | None = {value}\n")
    with pytest.raises(builtin_defaults.SourceError, match="fsType"):
        builtin_defaults.collect(tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("kube_models") is None, reason="kube-models is not installed")
def test_the_generated_module_is_current() -> None:
    """Regenerate with `python -m pyop_scaffold.codegen.builtin_defaults scaffold/manifests/builtin/go_defaults.py`."""
    assert builtin_defaults.main(["--check", str(GENERATED)]) == 0


def test_inline_embedders_of_local_object_reference_are_atomic_as_it_is() -> None:
    """controller-gen flattens LocalObjectReference (+structType=atomic) into the types embedding it inline."""
    pod = builtin_schema("io.k8s.api.core.v1.PodSpec")["properties"]
    env_from = pod["containers"]["items"]["properties"]["envFrom"]["items"]["properties"]
    assert env_from["configMapRef"]["x-kubernetes-map-type"] == "atomic"
    assert env_from["secretRef"]["x-kubernetes-map-type"] == "atomic"
    volume = pod["volumes"]["items"]["properties"]
    assert volume["configMap"]["x-kubernetes-map-type"] == "atomic"
    projected = volume["projected"]["properties"]["sources"]["items"]["properties"]
    assert projected["configMap"]["x-kubernetes-map-type"] == "atomic"
    assert projected["secret"]["x-kubernetes-map-type"] == "atomic"
    assert "x-kubernetes-map-type" not in volume["secret"]  # SecretVolumeSource embeds nothing (secretName)
    assert "x-kubernetes-map-type" not in volume["azureDisk"]
