"""No data loss through the API server: a write through a typed model stores back, unchanged, everything the
controller did not touch.

For common kinds an operator manages, random objects are drawn from the OpenAPI definitions (tests/api/k8s_objects.py:
every optional field may appear, times, quantities, int-or-strings and undeclared keys included), stored in pyop's
test API server, and then written once through the kind's generated model with create_or_update, create_or_patch,
update, patch, update_status or patch_status, changing one label (or, for status writes, nothing: the status read
is written back). The stored object afterwards must equal the stored object before plus that label, compared as
canonical JSON so that `1` turning into `1.0` or `true` into `1` counts as a change. Only resourceVersion and
managedFields (the write's own bookkeeping) may differ.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from k8s_objects import DEFINITIONS, object_of
from pydantic import BaseModel
from test_k8s_roundtrip import model_of

from pyop.api.definitions import reference_target
from pyop.api.k8s.meta.v1 import ObjectMeta
from pyop.client import ApiError, Client, NotFoundError
from pyop.client.resources import APIResource, resource_for_model
from pyop.controller import create_or_patch, create_or_update
from pyop.testing import TestAPIServer
from pyop.testing.builtins._go_json_zero import ZERO_FIELDS

# Kinds an operator typically owns or watches, by definition name.
KINDS = [
    "io.k8s.api.apps.v1.Deployment",
    "io.k8s.api.apps.v1.StatefulSet",
    "io.k8s.api.apps.v1.DaemonSet",
    "io.k8s.api.batch.v1.Job",
    "io.k8s.api.batch.v1.CronJob",
    "io.k8s.api.core.v1.Pod",
    "io.k8s.api.core.v1.Service",
    "io.k8s.api.core.v1.ConfigMap",
    "io.k8s.api.core.v1.Secret",
    "io.k8s.api.core.v1.ServiceAccount",
    "io.k8s.api.core.v1.PersistentVolumeClaim",
    "io.k8s.api.networking.v1.Ingress",
    "io.k8s.api.networking.v1.NetworkPolicy",
    "io.k8s.api.policy.v1.PodDisruptionBudget",
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler",
    "io.k8s.api.coordination.v1.Lease",
    "io.k8s.api.rbac.v1.Role",
]
WRITES = ["create_or_update", "create_or_patch", "update", "patch", "update_status", "patch_status"]
NAME, NAMESPACE = "subject", "default"
BOOKKEEPING = ("resourceVersion", "managedFields")
EXAMPLES = 16  # per kind


def canonical(obj: dict[str, Any]) -> str:
    metadata = {k: v for k, v in obj.get("metadata", {}).items() if k not in BOOKKEEPING}
    return json.dumps({**obj, "metadata": metadata}, sort_keys=True)


# Where a kind holds a Pod spec (and a Pod template, labelled for the selector).
POD_SPECS = {
    "io.k8s.api.apps.v1.Deployment": ("spec", "template", "spec"),
    "io.k8s.api.apps.v1.StatefulSet": ("spec", "template", "spec"),
    "io.k8s.api.apps.v1.DaemonSet": ("spec", "template", "spec"),
    "io.k8s.api.apps.v1.ReplicaSet": ("spec", "template", "spec"),
    "io.k8s.api.batch.v1.Job": ("spec", "template", "spec"),
    "io.k8s.api.batch.v1.CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "io.k8s.api.core.v1.Pod": ("spec",),
}
SELECTED = {
    "io.k8s.api.apps.v1.Deployment",
    "io.k8s.api.apps.v1.StatefulSet",
    "io.k8s.api.apps.v1.DaemonSet",
    "io.k8s.api.apps.v1.ReplicaSet",
}
LABELS = {"app": NAME}


def _dig(obj: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for key in path:
        if not isinstance(obj.get(key), dict):
            obj[key] = {}
        obj = obj[key]
    return obj


def as_created(definition: str, wire: dict[str, Any]) -> dict[str, Any]:
    """The random object as a client would create it: our name and labels, no status, and what the API server's
    validation insists on where random text never passes it (object names and label values, a workload's
    selector matching its template, containers with a name and an image). Everything else stays random."""
    obj = copy.deepcopy({key: value for key, value in wire.items() if key != "status"})
    obj["metadata"] = {"name": NAME, "labels": dict(LABELS)}
    if definition in POD_SPECS:
        path = POD_SPECS[definition]
        if len(path) > 1:
            _dig(obj, path[:-1])["metadata"] = {"labels": dict(LABELS)}
        pod = _dig(obj, path)
        for field in ("containers", "initContainers"):
            containers = pod.get(field) or ([{}] if field == "containers" else [])
            pod[field] = [{**c, "name": f"{field[0]}{i}", "image": "busybox"} for i, c in enumerate(containers)]
        pod.pop("ephemeralContainers", None)
        if definition == "io.k8s.api.core.v1.Pod":
            # Pod admission refuses a service account that does not exist and a priority its class does not give.
            for field in ("serviceAccountName", "serviceAccount", "priorityClassName", "priority", "preemptionPolicy"):
                pod.pop(field, None)
    if definition in SELECTED:
        obj["spec"]["selector"] = {"matchLabels": dict(LABELS)}
    if definition == "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler":
        # What an HPA cannot be created without: a scale target and maxReplicas (the API defaults minReplicas and
        # the cpu metric around them).
        spec = obj.setdefault("spec", {})
        spec.setdefault("scaleTargetRef", {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
        spec.setdefault("maxReplicas", 3)
    return obj


def touch(obj: Any) -> None:
    obj.metadata.labels = {**(obj.metadata.labels or {}), "touched": "yes"}


async def write_once(client: Client, model: type[BaseModel], write: str) -> None:
    # The object naming what to write: not validated, so a kind with a required spec can be named too.
    key = model.model_construct(metadata=ObjectMeta(name=NAME, namespace=NAMESPACE))
    if write == "create_or_update":
        await create_or_update(client, key, touch)
    elif write == "create_or_patch":
        await create_or_patch(client, key, touch)
    elif write == "update":
        obj = await client.get(model, NAME, NAMESPACE)
        touch(obj)
        await client.update(obj)
    elif write == "patch":
        touch(key)
        await client.patch(model, NAME, key, NAMESPACE)  # a partial object: only what it sets is sent
    elif write == "update_status":
        await client.update_status(await client.get(model, NAME, NAMESPACE))
    else:
        read = (await client.get(model, NAME, NAMESPACE)).model_dump(by_alias=True, exclude_none=True, mode="json")
        await client.patch_status(model, NAME, {"status": read["status"]} if "status" in read else {}, NAMESPACE)


async def stored_example(client: Client, resource: APIResource, definition: str, wire: dict[str, Any]) -> Any:
    """Store `wire` (and its status); None when the API server refuses the random object (as it may).

    The test API server validates less than kube-apiserver, so it accepts random objects kube-apiserver would
    refuse (a Service without ports), and its defaults for those on create can differ from those on update. One
    raw update of the stored JSON brings the object to the server's fixed point first, so that what the test
    compares afterwards is the typed write alone.
    """
    with contextlib.suppress(NotFoundError):
        await client.dynamic.delete(resource, NAME, NAMESPACE, grace_period_seconds=0)
    try:
        stored = await client.dynamic.create(resource, as_created(definition, wire), namespace=NAMESPACE)
        status = wire.get("status", go_zero(status_definition(definition)))
        if status is not None:
            stored = await client.dynamic.update_status(resource, {**stored, "status": status})
        return await client.dynamic.update(resource, stored)
    except ApiError as error:
        if error.code in (400, 422):
            return None
        raise


def status_definition(definition: str) -> str | None:
    ref = ((DEFINITIONS[definition].get("properties") or {}).get("status") or {}).get("$ref")
    return reference_target(ref) if isinstance(ref, str) else None


def go_zero(definition: str | None) -> dict[str, Any] | None:
    """What kube-apiserver writes for a status it reset on create: Go encodes the zero value of every field
    without `omitempty` (the struct tags' table, else the definition's required ones), so a new StatefulSet reads
    `status: {replicas: 0, availableReplicas: 0}`."""
    if definition is None:
        return None
    if definition in ZERO_FIELDS:
        return {name: zero for name, zero in ZERO_FIELDS[definition]}
    schema = DEFINITIONS[definition]
    zero: dict[str, Any] = {}
    for name in schema.get("required") or ():
        prop = schema["properties"][name]
        kind = prop.get("type")
        if kind in ("integer", "number"):
            zero[name] = 0
        elif kind == "boolean":
            zero[name] = False
        elif kind == "string":
            zero[name] = ""
        elif isinstance(prop.get("$ref"), str) and reference_target(prop["$ref"]) in DEFINITIONS:
            zero[name] = go_zero(reference_target(prop["$ref"]))
    return zero


def examples_of(definition: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(object_of(definition))
    def collect(wire: dict[str, Any]) -> None:
        found.append(wire)

    collect()
    return found


@pytest.mark.parametrize("definition", KINDS, ids=[kind.rsplit(".", 1)[1] for kind in KINDS])
def test_a_write_through_the_model_keeps_every_untouched_byte(definition: str) -> None:
    model = model_of(definition)
    resource = resource_for_model(model)
    examples = examples_of(definition)
    # Status writes for the kinds that have a status (and so a status subresource).
    writes = WRITES if "status" in model.model_fields else [w for w in WRITES if not w.endswith("_status")]

    async def run() -> tuple[int, set[str]]:
        accepted, tried = 0, set()
        async with TestAPIServer() as server, Client(server.client_config()) as client:
            for index, wire in enumerate(examples):
                for write in writes if index == 0 else [writes[index % len(writes)]]:
                    stored = await stored_example(client, resource, definition, wire)
                    if stored is None:
                        continue
                    accepted += 1
                    tried.add(write)
                    await write_once(client, model, write)
                    after = await client.dynamic.get(resource, NAME, NAMESPACE)
                    expected = stored
                    if not write.endswith("_status"):
                        labels = {**(stored["metadata"].get("labels") or {}), "touched": "yes"}
                        expected = {**stored, "metadata": {**stored["metadata"], "labels": labels}}
                    assert canonical(after) == canonical(expected), (write, wire)
        return accepted, tried

    accepted, tried = asyncio.run(run())
    assert accepted >= len(examples) // 4, f"the API server refused most random {definition}: the test tests little"
    assert tried == set(writes) or accepted < len(writes)


def test_the_kinds_are_definitions_of_the_bundled_release() -> None:
    assert set(KINDS) <= set(DEFINITIONS)


# The status fields without `omitempty` in k8s.io/api (apps/v1 and autoscaling/v2 types.go): a new object's status.
ZERO_STATUS: dict[str, dict[str, Any]] = {
    "io.k8s.api.apps.v1.Deployment": {},
    "io.k8s.api.apps.v1.StatefulSet": {"replicas": 0, "availableReplicas": 0},
    "io.k8s.api.apps.v1.DaemonSet": {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    },
    "io.k8s.api.apps.v1.ReplicaSet": {"replicas": 0},
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler": {"desiredReplicas": 0, "currentMetrics": None},
}


@pytest.mark.parametrize("definition", ZERO_STATUS)
def test_a_new_object_reads_back_as_kube_apiserver_writes_it(definition: str) -> None:
    """A new object's status is Go's encoding of the zero status, and the typed model reads it."""
    model = model_of(definition)
    (gvk,) = DEFINITIONS[definition]["x-kubernetes-group-version-kind"]
    wire = {"apiVersion": f"{gvk['group']}/{gvk['version']}".lstrip("/"), "kind": gvk["kind"]}

    async def run() -> dict[str, Any]:
        async with TestAPIServer() as server, Client(server.client_config()) as client:
            created: dict[str, Any] = await client.dynamic.create(
                resource_for_model(model), as_created(definition, wire), namespace=NAMESPACE
            )
            return created

    created = asyncio.run(run())
    assert created.get("status") == ZERO_STATUS[definition]
    model.model_validate(created)
