"""No data loss for a custom resource that embeds built-in types: what an operator's own models (the CronJob of
docs/tutorials/cronjob.md holds a JobTemplateSpec and ObjectReferences) write back through the test API server.

The CRD is generated from the models below as `pyop make manifests` does (SchemaBuilder with the built-in
schemas); random specs and statuses come from the OpenAPI definitions of the embedded types (tests/api/k8s_objects.py).
Each example is stored, then written once through the model; the stored object afterwards must equal the one
before plus the touched label (spec and metadata writes) or exactly (status writes), as canonical JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from k8s_objects import SPECIAL, object_of
from pydantic import Field
from test_k8s_roundtrip_server import NAME, NAMESPACE, WRITES, canonical, write_once

from pyop.api import Condition, GroupVersion, Int32, KubeModel, Resource
from pyop.api.builtin_types import IntOrString, Quantity
from pyop.api.k8s.batch.v1 import JobTemplateSpec
from pyop.api.k8s.core.v1 import ObjectReference, PodTemplateSpec
from pyop.client import ApiError, Client, NotFoundError
from pyop.client.resources import resource_for_model
from pyop.testing import TestAPIServer
from pyop_scaffold.manifests.builtin import builtin_schema
from pyop_scaffold.manifests.crd.assemble import root_schema
from pyop_scaffold.manifests.crd.schema import SchemaBuilder

GROUP_VERSION = GroupVersion("roundtrip.pyop.dev", "v1")
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."


class PipelineSpec(KubeModel):
    job_template: JobTemplateSpec
    # +optional
    pod: PodTemplateSpec | None = None
    # +optional
    port: IntOrString | None = None
    # +optional
    memory: Quantity | None = None
    # +optional
    replicas: Int32 | None = None


class PipelineStatus(KubeModel):
    # +optional
    active: list[ObjectReference] = Field(default_factory=list)
    # +optional
    last_run: datetime | None = None
    # +listType=map
    # +listMapKey=type
    # +optional
    conditions: list[Condition] = Field(default_factory=list)


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
class Pipeline(Resource, group_version=GROUP_VERSION):
    spec: PipelineSpec
    # +optional
    status: PipelineStatus | None = None


def crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "pipelines.roundtrip.pyop.dev"},
        "spec": {
            "group": GROUP_VERSION.group,
            "names": {"kind": "Pipeline", "listKind": "PipelineList", "plural": "pipelines", "singular": "pipeline"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": root_schema(Pipeline, SchemaBuilder(builtin_schema))},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


_conditions = st.lists(object_of(_META + "Condition"), max_size=2, unique_by=lambda c: c["type"])
_pipelines = st.fixed_dictionaries(
    {
        "apiVersion": st.just("roundtrip.pyop.dev/v1"),
        "kind": st.just("Pipeline"),
        "metadata": st.fixed_dictionaries({"name": st.just(NAME)}, optional={"labels": st.just({"a": "b"})}),
        "spec": st.fixed_dictionaries(
            {"jobTemplate": object_of("io.k8s.api.batch.v1.JobTemplateSpec")},
            optional={
                "pod": object_of("io.k8s.api.core.v1.PodTemplateSpec"),
                "port": SPECIAL["io.k8s.apimachinery.pkg.util.intstr.IntOrString"],
                "memory": SPECIAL["io.k8s.apimachinery.pkg.api.resource.Quantity"],
                "replicas": st.integers(0, 2**31 - 1),
            },
        ),
    },
    optional={
        # Both lists always present, even empty: see test_a_status_write_adds_no_empty_lists for a status without.
        "status": st.fixed_dictionaries(
            {
                "active": st.lists(object_of("io.k8s.api.core.v1.ObjectReference"), max_size=2),
                "conditions": _conditions,
            },
            optional={"lastRun": SPECIAL[_META + "Time"]},
        )
    },
)


def examples() -> list[dict[str, Any]]:
    """30 random Pipelines, the same 30 on every run (derandomized): unseeded, most runs drew 21-23 that the CRD's
    schema accepts, but one CI run drew only 9 (random condition reasons and types refused) and failed the threshold
    below. The derandomized 30 give 21."""
    found: list[dict[str, Any]] = []

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
    @given(_pipelines)
    def collect(wire: dict[str, Any]) -> None:
        found.append(wire)

    collect()
    return found


def test_writes_of_a_custom_resource_keep_its_embedded_built_in_types() -> None:
    resource = resource_for_model(Pipeline)

    async def run() -> tuple[int, set[str]]:
        accepted, tried = 0, set()
        async with TestAPIServer() as server, Client(server.client_config()) as client:
            server.add_crd(crd())
            for index, wire in enumerate(examples()):
                write = WRITES[index % len(WRITES)]
                with contextlib.suppress(NotFoundError):
                    await client.dynamic.delete(resource, NAME, NAMESPACE)
                try:
                    body = {key: value for key, value in wire.items() if key != "status"}
                    stored = await client.dynamic.create(resource, body, namespace=NAMESPACE)
                    if "status" in wire:
                        stored = await client.dynamic.update_status(resource, {**stored, "status": wire["status"]})
                except ApiError as error:
                    if error.code in (400, 422):  # a random value the CRD's schema refuses
                        continue
                    raise
                accepted += 1
                tried.add(write)
                await write_once(client, Pipeline, write)
                after = await client.dynamic.get(resource, NAME, NAMESPACE)
                expected = stored
                if not write.endswith("_status"):
                    labels = {**(stored["metadata"].get("labels") or {}), "touched": "yes"}
                    expected = {**stored, "metadata": {**stored["metadata"], "labels": labels}}
                assert canonical(after) == canonical(expected), (write, wire)
        return accepted, tried

    accepted, tried = asyncio.run(run())
    assert accepted >= 15, f"the CRD's schema refused {30 - accepted} of 30 random Pipelines: the test tests little"
    assert tried == set(WRITES)


def test_a_status_write_adds_no_empty_lists() -> None:
    """A status read without `active` and `conditions` (another writer's, or an older controller's) and written
    back unchanged stays without them: Go's `omitempty` writes nothing for an empty list, and neither should a
    field's `default_factory=list` that nobody set."""
    resource = resource_for_model(Pipeline)
    body = {
        "apiVersion": "roundtrip.pyop.dev/v1",
        "kind": "Pipeline",
        "metadata": {"name": NAME},
        "spec": {"jobTemplate": {}},
    }

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        async with TestAPIServer() as server, Client(server.client_config()) as client:
            server.add_crd(crd())
            stored = await client.dynamic.create(resource, body, namespace=NAMESPACE)
            stored = await client.dynamic.update_status(
                resource, {**stored, "status": {"lastRun": "2026-01-01T00:00:00Z"}}
            )
            await client.update_status(await client.get(Pipeline, NAME, NAMESPACE))
            return stored, await client.dynamic.get(resource, NAME, NAMESPACE)

    stored, after = asyncio.run(run())
    assert after["status"] == stored["status"] == {"lastRun": "2026-01-01T00:00:00Z"}
