"""`pyop.api.builtin_types`: plain data at run time, the right definition for the generator, light to import."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ValidationError

from pyop.api import builtin_types as bt
from pyop_scaffold.manifests.builtin import PINNED_KUBERNETES_VERSION, builtin_definitions, builtin_schema


class Backup(BaseModel):
    template: bt.PodTemplateSpec
    resources: bt.ResourceRequirements | None = None
    cpu: bt.Quantity = "100m"
    port: bt.IntOrString = 8080
    retention: bt.Duration = "720h"
    started: bt.Time | None = None
    renewed: bt.MicroTime | None = None
    extension: bt.RawExtension | None = None
    ports: list[bt.ContainerPort] = []


def test_every_alias_names_a_definition_the_pinned_version_has() -> None:
    known = builtin_definitions(PINNED_KUBERNETES_VERSION)
    unknown = {name: bt.builtin_type_of(alias) for name, alias in bt.BUILTIN_TYPE_ALIASES.items()}
    assert {name: marker for name, marker in unknown.items() if marker is None or marker.definition not in known} == {}
    assert len(bt.BUILTIN_TYPE_ALIASES) >= 25


@pytest.mark.parametrize("name", sorted(bt.BUILTIN_TYPE_ALIASES))
def test_every_alias_yields_a_schema(name: str) -> None:
    marker = bt.builtin_type_of(bt.BUILTIN_TYPE_ALIASES[name])
    assert marker is not None
    schema = builtin_schema(marker.definition)
    assert schema.get("type") in {"object", "string"} or schema.get("x-kubernetes-int-or-string") is True


def test_alias_names_match_their_definitions() -> None:
    mismatched = {
        name: marker.definition
        for name, alias in bt.BUILTIN_TYPE_ALIASES.items()
        if (marker := bt.builtin_type_of(alias)) is not None and marker.definition.rsplit(".", 1)[-1] != name
    }
    assert mismatched == {}


def test_objects_validate_as_plain_dicts() -> None:
    backup = Backup(
        template={"spec": {"containers": [{"name": "a", "image": "busybox"}]}},
        ports=[{"containerPort": 80}],
    )
    assert backup.template == {"spec": {"containers": [{"name": "a", "image": "busybox"}]}}
    assert backup.ports == [{"containerPort": 80}]
    with pytest.raises(ValidationError):
        Backup(template="not an object")


@pytest.mark.parametrize(("value", "kept"), [("500m", "500m"), (2, 2), ("1Gi", "1Gi")])
def test_quantities_keep_their_spelling(value: Any, kept: Any) -> None:
    assert Backup(template={}, cpu=value).cpu == kept


@pytest.mark.parametrize(("value", "kept"), [(8080, 8080), ("http", "http"), ("25%", "25%")])
def test_int_or_string_keeps_the_kind_it_was_given(value: Any, kept: Any) -> None:
    port = Backup(template={}, port=value).port
    assert port == kept and type(port) is type(kept)


def test_time_reads_rfc3339_and_writes_utc_whole_seconds() -> None:
    backup = Backup(template={}, started="2024-05-01T12:20:30.75+02:00")
    assert backup.started == datetime(2024, 5, 1, 10, 20, 30, 750000, tzinfo=UTC)
    assert backup.model_dump(mode="json")["started"] == "2024-05-01T10:20:30Z"
    assert backup.model_dump()["started"] == datetime(2024, 5, 1, 10, 20, 30, 750000, tzinfo=UTC)


def test_naive_times_are_taken_as_utc() -> None:
    backup = Backup(template={}, started=datetime(2024, 1, 2, 3, 4, 5))
    assert backup.started is not None and backup.started.tzinfo is UTC
    assert backup.model_dump(mode="json")["started"] == "2024-01-02T03:04:05Z"


def test_aware_times_in_other_zones_are_converted() -> None:
    started = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=-5)))
    assert Backup(template={}, started=started).model_dump(mode="json")["started"] == "2024-01-02T08:04:05Z"


def test_micro_time_keeps_microseconds() -> None:
    backup = Backup(template={}, renewed="2024-05-01T10:20:30.000123Z")
    assert backup.model_dump(mode="json")["renewed"] == "2024-05-01T10:20:30.000123Z"


def test_durations_and_raw_extensions_pass_through() -> None:
    backup = Backup(template={}, retention="1h30m", extension={"kind": "Anything", "x": [1, {"y": None}]})
    assert backup.model_dump(mode="json")["retention"] == "1h30m"
    assert backup.extension == {"kind": "Anything", "x": [1, {"y": None}]}


def test_builtin_type_of_reads_annotations_and_field_metadata() -> None:
    assert bt.builtin_type_of(bt.PodSpec) == bt.BuiltinType("io.k8s.api.core.v1.PodSpec")
    assert bt.builtin_type_of(Backup.model_fields["cpu"].metadata) == bt.BuiltinType(
        "io.k8s.apimachinery.pkg.api.resource.Quantity"
    )
    assert bt.builtin_type_of(Annotated[int, "unrelated"]) is None
    assert bt.builtin_type_of(dict[str, Any]) is None
    assert bt.builtin_type_of("io.k8s.api.core.v1.PodSpec") is None


def test_importing_the_aliases_loads_no_generator_or_schema_machinery() -> None:
    probe = (
        "import sys, pyop.api.builtin_types; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'scaffold', 'kubernetes_validate', 'jsonschema', 'referencing', 'yaml', 'ruamel'}))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"
