"""Writes through models keep what the controller did not touch, against pyop's test API server.

A Deployment is created with fields drawn at random from its definition's optional parts (strategy,
minReadySeconds, revisionHistoryLimit, labels, annotations, pod template details); then create_or_update,
create_or_patch, update and update_status change one field through a model: the generated full model, or a user's
partial one declaring nothing but `spec.replicas`. Everything else must be stored exactly as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from pyop.api import GroupVersion, KubeModel, ObjectMeta, Resource
from pyop.api.k8s.apps.v1 import Deployment
from pyop.client import Client, DataLossWarning, InvalidError, NotFoundError
from pyop.client.resources import BUILTIN
from pyop.controller import create_or_patch, create_or_update
from pyop.testing import TestAPIServer

APPS_V1 = GroupVersion("apps", "v1")
DEPLOYMENTS = BUILTIN["apps/v1/Deployment"]


class PartialSpec(KubeModel):
    replicas: int | None = None


class PartialDeployment(Resource, group_version=APPS_V1, kind="Deployment"):
    """What a user writes by hand: the one field the controller manages."""

    spec: PartialSpec | None = None


_words = st.text("abcdefghij", min_size=1, max_size=6)
_strategies = st.one_of(
    st.just({"type": "Recreate"}),
    st.builds(
        lambda surge, unavailable: {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable},
        },
        st.sampled_from([1, 2, "25%"]),
        st.sampled_from([0, 1, "10%"]),
    ),
)
_optional_spec = st.fixed_dictionaries(
    {},
    optional={
        "strategy": _strategies,
        "minReadySeconds": st.integers(0, 30),
        "revisionHistoryLimit": st.integers(0, 20),
        "progressDeadlineSeconds": st.integers(60, 900),
        "paused": st.booleans(),
    },
)
_containers = st.lists(
    st.fixed_dictionaries(
        {"image": st.sampled_from(["nginx:1.27", "busybox"])},
        optional={
            "env": st.lists(
                st.fixed_dictionaries({"name": _words, "value": _words}), max_size=2, unique_by=lambda e: e["name"]
            ),
            "args": st.lists(_words, max_size=2),
            "resources": st.just({"limits": {"cpu": "500m", "memory": "128Mi"}}),
            "ports": st.just([{"containerPort": 8080, "protocol": "TCP", "name": "http"}]),
        },
    ),
    min_size=1,
    max_size=2,
)


def _deployment(
    name: str, spec_extras: dict[str, Any], containers: list[dict[str, Any]], labels: dict[str, str]
) -> dict[str, Any]:
    for index, container in enumerate(containers):
        container["name"] = f"c{index}"
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "labels": labels, "annotations": {"note": "kept"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": containers}},
            **spec_extras,
        },
    }


_objects = st.builds(
    _deployment,
    st.just("web"),
    _optional_spec,
    _containers,
    st.dictionaries(_words, _words, max_size=2),
)

_SERVER_FIELDS = ("resourceVersion", "generation", "managedFields", "uid", "creationTimestamp")


def _without_volatile(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = {k: v for k, v in obj["metadata"].items() if k not in _SERVER_FIELDS}
    return {**obj, "metadata": metadata}


def _set_replicas(replicas: int) -> Callable[[Any], None]:
    def mutate(deployment: Any) -> None:
        deployment.spec.replicas = replicas

    return mutate


async def _round_trip(server: TestAPIServer, wire: dict[str, Any], write: str, model: type[Resource]) -> None:
    async with Client(server.client_config()) as client:
        with contextlib.suppress(NotFoundError):  # a fresh object per example
            await client.dynamic.delete(DEPLOYMENTS, "web", "default")
        stored = await client.dynamic.create(DEPLOYMENTS, wire)
        key = model(metadata=ObjectMeta(name="web", namespace="default"))
        if write == "create_or_update":
            await create_or_update(client, key, _set_replicas(3))
        elif write == "create_or_patch":
            await create_or_patch(client, key, _set_replicas(3))
        else:
            obj = await client.get(model, "web", "default")
            assert obj.spec is not None  # type: ignore[attr-defined]
            obj.spec.replicas = 3  # type: ignore[attr-defined]
            await client.update(obj)
        after = await client.dynamic.get(DEPLOYMENTS, "web", "default")
    expected = _without_volatile(stored)
    expected["spec"] = {**expected["spec"], "replicas": 3}
    assert _without_volatile(after) == expected


@pytest.mark.parametrize("model", [Deployment, PartialDeployment], ids=["generated", "partial"])
@pytest.mark.parametrize("write", ["create_or_update", "create_or_patch", "update"])
def test_writes_keep_every_field_the_controller_did_not_touch(write: str, model: type[Resource]) -> None:
    async def run() -> None:
        async with TestAPIServer() as server:
            for example in examples:
                await _round_trip(server, example, write, model)

    examples: list[dict[str, Any]] = []

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_objects)
    def collect(wire: dict[str, Any]) -> None:
        examples.append(wire)

    collect()
    asyncio.run(run())


def test_the_issue_example_keeps_strategy_and_min_ready_seconds() -> None:
    """`create_or_update(client, Deployment(metadata=...), lambda d: setattr(d.spec, "replicas", 3))`."""

    async def run() -> None:
        async with TestAPIServer() as server, Client(server.client_config()) as client:
            extras = {"strategy": {"type": "Recreate"}, "minReadySeconds": 7}
            wire = _deployment("web", extras, [{"image": "nginx"}], {})
            await client.dynamic.create(DEPLOYMENTS, wire)
            for model in (PartialDeployment, Deployment):
                key = model(metadata=ObjectMeta(name="web", namespace="default"))
                await create_or_update(client, key, lambda d: setattr(d.spec, "replicas", 3))
                spec = (await client.dynamic.get(DEPLOYMENTS, "web", "default"))["spec"]
                assert spec["strategy"] == {"type": "Recreate"} and spec["minReadySeconds"] == 7
                assert spec["replicas"] == 3

    asyncio.run(run())


def test_status_writes_keep_undeclared_status_fields() -> None:
    class PartialStatus(KubeModel):
        observed_generation: int | None = None

    class StatusOnly(Resource, group_version=APPS_V1, kind="Deployment"):
        status: PartialStatus | None = None

    async def run() -> None:
        async with TestAPIServer() as server, Client(server.client_config()) as client:
            await client.dynamic.create(DEPLOYMENTS, _deployment("web", {}, [{"image": "nginx"}], {}))
            at = "2026-01-01T00:00:00Z"
            condition = {"type": "Available", "status": "True", "lastUpdateTime": at, "lastTransitionTime": at}
            status = {"replicas": 2, "readyReplicas": 1, "conditions": [condition]}
            current = await client.dynamic.get(DEPLOYMENTS, "web", "default")
            await client.dynamic.update_status(DEPLOYMENTS, {**current, "status": status})
            obj = await client.get(StatusOnly, "web", "default")
            assert obj.status is not None
            obj.status.observed_generation = 1
            await client.update_status(obj)
            stored = (await client.dynamic.get(DEPLOYMENTS, "web", "default"))["status"]
            assert stored == {**status, "observedGeneration": 1}

    asyncio.run(run())


def test_a_model_that_drops_unknown_fields_warns_before_a_whole_object_write() -> None:
    class LossySpec(BaseModel):
        model_config = ConfigDict(extra="ignore")
        replicas: int | None = None

    class Lossy(Resource, group_version=APPS_V1, kind="Deployment"):
        spec: LossySpec | None = None

    async def run() -> None:
        async with TestAPIServer() as server, Client(server.client_config()) as client:
            await client.dynamic.create(DEPLOYMENTS, _deployment("web", {}, [{"image": "nginx"}], {}))
            obj = await client.get(Lossy, "web", "default")
            # The warning comes before the write; the write itself is refused, as kube-apiserver refuses a
            # Deployment that lost its selector and pod template (422).
            with pytest.warns(DataLossWarning, match="LossySpec|Lossy"), pytest.raises(InvalidError, match="selector"):
                await client.update(obj)
            with warnings.catch_warnings():
                warnings.simplefilter("error", DataLossWarning)
                await client.update(await client.get(PartialDeployment, "web", "default"))

    asyncio.run(run())
