"""The registry asks a kind's strategy (pyop/apiserver/registry/strategy.py), never its storage key: a kind served
by a registry with a strategy of its own gets that strategy's generation, create and update steps, validation,
name rule, deletion hooks and finalizers; the test API server's built-in kinds get theirs from one table."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from pyop.api.status import ApiError, StatusCause
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.apiserver.registry.resources import ResourceRegistry, ResourceType, types_from_crd
from pyop.apiserver.registry.strategy import Generation, NameRule, RegistryContext, RESTStrategy, Strategy
from pyop.apiserver.storage.store import Store
from pyop.testing.builtins.catalog import builtin_types
from pyop.testing.builtins.strategies import strategy_for
from pyop.testing.builtins.strategy import BuiltinStrategy
from pyop.testing.crds import schemaless_crd
from pyop.testing.crds.strategy import SchemaStrategy

HOLD = "example.com/hold"


class WidgetStrategy(Strategy):
    """A kind whose generation also follows its labels, with a DNS-label name, a phase set on create, a
    validation rule, a finalizer of its own added on delete and a Terminating phase while held."""

    generation: Generation | None = Generation(metadata_fields=("labels",))
    name_rule: NameRule = "dns-label"

    def prepare_for_create(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        obj["status"] = {"phase": "New", "createdAt": ctx.now()}

    def prepare_for_update(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None:
        obj.setdefault("spec", {})["updates"] = (old.get("spec") or {}).get("updates", 0) + 1

    def validate(
        self, obj: dict[str, Any], old: dict[str, Any] | None, field_validation: str, warnings: list[str]
    ) -> tuple[dict[str, Any], list[StatusCause]]:
        size = (obj.get("spec") or {}).get("size", 0)
        causes = (
            [StatusCause("FieldValueInvalid", "Invalid value: must be at most 10", "spec.size")] if size > 10 else []
        )
        return obj, causes

    def prepare_for_delete(self, obj: dict[str, Any]) -> None:
        obj["metadata"]["finalizers"] = [*(obj["metadata"].get("finalizers") or []), HOLD]

    def deleting(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None:
        obj["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}


class WidgetOperations(Operations):
    def make_strategy(self, resource_type: ResourceType) -> RESTStrategy:
        return WidgetStrategy(resource_type)


@pytest.fixture
def ops() -> WidgetOperations:
    crd = schemaless_crd("example.com", "Widget", "widgets", scope="Cluster")
    return WidgetOperations(
        Store(100),
        ResourceRegistry(types_from_crd(crd)),
        clock=lambda: datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        users={},
        bookmark_interval=1.0,
    )


def _widgets(ops: Operations) -> ResourceType:
    return ops.resources.lookup("example.com", "v1", "widgets")


def test_create_and_update_run_the_strategy(ops: WidgetOperations) -> None:
    widgets, options = _widgets(ops), WriteOptions()
    created = ops.create(widgets, "", {"metadata": {"name": "w1"}, "spec": {"size": 1}}, options)
    assert created["status"] == {"phase": "New", "createdAt": "2026-01-02T03:04:05Z"}
    assert created["metadata"]["generation"] == 1
    relabelled = ops.update(
        widgets, "", "w1", {**created, "metadata": {**created["metadata"], "labels": {"a": "b"}}}, options
    )
    assert relabelled["spec"]["updates"] == 1
    assert relabelled["metadata"]["generation"] == 2  # the spec changed (updates) and so did the labels
    with pytest.raises(ApiError) as refused:
        ops.update(widgets, "", "w1", {**relabelled, "spec": {"size": 11}}, options)
    assert refused.value.code == 422 and refused.value.causes[0].field == "spec.size"


def test_name_rule_is_the_strategys(ops: WidgetOperations) -> None:
    with pytest.raises(ApiError) as refused:
        ops.create(_widgets(ops), "", {"metadata": {"name": "a.b"}}, WriteOptions())  # a subdomain, not a label
    assert refused.value.code == 422


def test_delete_hooks_and_finalizers_are_the_strategys(ops: WidgetOperations) -> None:
    widgets = _widgets(ops)
    ops.create(widgets, "", {"metadata": {"name": "w2"}}, WriteOptions())
    held, gone = ops.delete(widgets, "", "w2", {}, WriteOptions())
    assert not gone
    assert held["metadata"]["finalizers"] == [HOLD] and held["status"]["phase"] == "Terminating"
    ops.remove_finalizer(widgets.storage_key, "", "w2", HOLD, manager="test")
    assert ops.store.get(widgets.storage_key, "", "w2") is None


def test_the_test_servers_kinds_get_their_strategies() -> None:
    builtin = BuiltinStrategy()
    types = {(t.group, t.plural): t for t in builtin_types(builtin.kubernetes_version)}
    namespace = strategy_for(types[("", "namespaces")], builtin)
    assert namespace.name_rule == "dns-label" and namespace.generation is None
    assert strategy_for(types[("apps", "deployments")], builtin).generation == Generation(
        metadata_fields=("annotations",)
    )
    assert strategy_for(types[("", "configmaps")], builtin).generation is None
    assert strategy_for(types[("rbac.authorization.k8s.io", "clusterroles")], builtin).name_rule == "path-segment"
    webhooks = types[("admissionregistration.k8s.io", "mutatingwebhookconfigurations")]
    assert strategy_for(webhooks, builtin).exempt_from_admission
    custom = types_from_crd(schemaless_crd("example.com", "Widget", "widgets"))[0]
    schema = strategy_for(custom, builtin)
    assert isinstance(schema, SchemaStrategy) and schema.generation is not None and not schema.supports_strategic_merge
