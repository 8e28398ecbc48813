"""The registry strategies of kube-apiserver's built-in kinds (pkg/registry/<group>/<kind>/strategy.go).

Every built-in kind is decoded into its type and defaulted (`BuiltinStrategy.decode`), has the generation rule of
its strategy (`generation`), gets its status reset on create (Go's encoding of the empty status struct) and the
metadata and workload validation of `validation.validate_object`. The kinds below add their own steps; which class a
kind gets is `strategy_for`, the one place that looks at storage keys. Custom resources get the schema strategy
(`pyop.testing.crds.strategy.SchemaStrategy`).
"""

from __future__ import annotations

from typing import Any

from pyop.api.status import StatusCause
from pyop.apiserver.endpoints.printing import CREATED_AT, NAME, created_at_row
from pyop.apiserver.registry.patch import clone_json
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.registry.strategy import NameRule, RegistryContext, RESTStrategy, Strategy, SubresourceStrategy
from pyop.testing.builtins import csr_approval, csr_request, defaulting, kinds
from pyop.testing.builtins.pod_update_subresources import EphemeralContainersStrategy, ResizeStrategy
from pyop.testing.builtins.printers import BUILTIN_PRINTERS
from pyop.testing.builtins.printers_cluster import CLUSTER_PRINTERS
from pyop.testing.builtins.strategy import BuiltinStrategy
from pyop.testing.builtins.validation import validate_object
from pyop.testing.webhooks import config as webhook_config


class BuiltinKindStrategy(Strategy):
    """A built-in kind: decoded, defaulted, generation per kind, status reset on create, validated."""

    def __init__(self, resource_type: ResourceType, builtin: BuiltinStrategy) -> None:
        super().__init__(resource_type)
        self.builtin = builtin
        self.generation = builtin.generation_rule(resource_type)
        key = (resource_type.group, resource_type.kind)
        self.printer = BUILTIN_PRINTERS.get(key) or CLUSTER_PRINTERS.get(key)

    def decode(
        self, obj: dict[str, Any], field_validation: str, warnings: list[str], old: dict[str, Any] | None
    ) -> dict[str, Any]:
        return self.builtin.decode(self.resource_type, obj, field_validation, warnings, old)

    def prepare_for_create(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        if self.resource_type.has_status:
            # Built-in strategies reset status on create (`job.Status = batch.JobStatus{}`); an empty struct is
            # still encoded, so a new Deployment or Job reads back with `status: {}`.
            obj["status"] = {}
        self.set_create_defaults(obj, ctx)
        if obj.get("status") == {}:
            obj["status"] = self.builtin.zero_status(self.resource_type)  # Go's encoding of the reset status

    def set_create_defaults(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        """The kind's own PrepareForCreate after the status reset (phases, defaults, allocated fields)."""

    def validate(
        self, obj: dict[str, Any], old: dict[str, Any] | None, field_validation: str, warnings: list[str]
    ) -> tuple[dict[str, Any], list[StatusCause]]:
        return obj, validate_object(self.resource_type, obj, old)


class NamespaceStrategy(BuiltinKindStrategy):
    name_rule: NameRule = "dns-label"

    def set_create_defaults(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        defaulting.namespace(obj)  # again: a generated name is known only now (the strategy's Canonicalize)
        obj["status"] = {"phase": "Active"}
        obj.setdefault("spec", {}).setdefault("finalizers", [kinds.NAMESPACE_FINALIZER])

    def deleting(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None:
        obj["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}

    def finalizers_remain(self, obj: dict[str, Any]) -> bool:
        return super().finalizers_remain(obj) or bool((obj.get("spec") or {}).get("finalizers"))

    def remove_finalizer(self, obj: dict[str, Any], finalizer: str) -> None:
        if finalizer == kinds.NAMESPACE_FINALIZER:  # the namespace controller's, kept in spec.finalizers
            spec = obj.setdefault("spec", {})
            spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != finalizer]
            return
        super().remove_finalizer(obj, finalizer)


class PodStrategy(BuiltinKindStrategy):
    def set_create_defaults(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        obj["status"] = {"phase": "Pending", "qosClass": defaulting.qos_class(obj.get("spec"))}

    def subresource_strategy(self, subresource: str) -> SubresourceStrategy | None:
        return _POD_SUBRESOURCES.get(subresource)  # served only where the catalog lists them (resize: 1.33+)


class CertificateSigningRequestStrategy(BuiltinKindStrategy):
    """csrStrategy: immutable but through its subresources (`approval`, `status`: csr_approval); the request is
    checked on create (csr_request), and its spec cannot change after."""

    def prepare_for_update(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None:
        obj["spec"] = old.get("spec")

    def validate(
        self, obj: dict[str, Any], old: dict[str, Any] | None, field_validation: str, warnings: list[str]
    ) -> tuple[dict[str, Any], list[StatusCause]]:
        obj, causes = super().validate(obj, old, field_validation, warnings)
        if old is None:
            causes = [*causes, *csr_request.request_problems(obj.get("spec") or {})]
        return obj, causes

    def subresource_strategy(self, subresource: str) -> SubresourceStrategy | None:
        return csr_approval.SUBRESOURCES.get(subresource)


class DeploymentStrategy(BuiltinKindStrategy):
    def set_create_defaults(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        obj["status"] = {}
        obj.setdefault("spec", {}).setdefault("replicas", 1)


class ServiceStrategy(BuiltinKindStrategy):
    def set_create_defaults(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        obj["status"] = {"loadBalancer": {}}
        obj.setdefault("spec", {}).setdefault("type", "ClusterIP")
        # The IP and node-port allocators: addresses not used by another Service.
        used_ips: set[str] = set()
        used_ports: set[int] = set()
        for service in ctx.store.objects("services", None):
            spec = service.get("spec") or {}
            used_ips.update(spec.get("clusterIPs") or [])
            used_ports.update(port.get("nodePort") for port in spec.get("ports") or () if port.get("nodePort"))
        obj["spec"] = spec = clone_json(obj["spec"])
        defaulting.allocate_service(spec, used_ips, used_ports)


class PersistentVolumeClaimStrategy(BuiltinKindStrategy):
    def set_create_defaults(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        obj["status"] = {"phase": "Pending"}  # SetDefaults_PersistentVolumeClaim


class SecretStrategy(BuiltinKindStrategy):
    def set_create_defaults(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        obj.setdefault("type", "Opaque")
        kinds.fold_secret_string_data(obj)

    def prepare_for_update(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None:
        kinds.fold_secret_string_data(obj)


class JobStrategy(BuiltinKindStrategy):
    def set_create_defaults(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        obj["spec"] = clone_json(obj.get("spec") or {})
        defaulting.generate_job_selector(obj)  # from the new uid
        defaulting.job(obj)  # the labels copied from the template now that it has the generated ones


class WebhookConfigurationStrategy(BuiltinKindStrategy):
    exempt_from_admission = True  # never sent to webhooks: a broken webhook could otherwise never be removed

    def set_create_defaults(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        self.prepare_for_update(obj, obj, ctx)

    def prepare_for_update(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None:
        mutating = self.resource_type.storage_key == webhook_config.MUTATING_KEY
        webhook_config.prepare(obj, mutating=mutating)


class CustomResourceDefinitionStrategy(BuiltinKindStrategy):
    def __init__(self, resource_type: ResourceType, builtin: BuiltinStrategy) -> None:
        super().__init__(resource_type, builtin)
        self.printer = ([NAME, CREATED_AT], created_at_row)  # kube-apiserver's DefaultTableConvertor

    def prepare_for_create(self, obj: dict[str, Any], ctx: RegistryContext) -> None:
        kinds.validate_crd(obj)
        obj["status"] = kinds.crd_status(obj, None, ctx.now())

    def prepare_for_update(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None:
        kinds.validate_crd(obj)
        obj["status"] = kinds.crd_status(obj, old, ctx.now())

    def prepare_for_delete(self, obj: dict[str, Any]) -> None:
        # The CRD's REST storage: its custom resources are deleted first (the controllers), then the CRD.
        metadata = obj["metadata"]
        metadata["finalizers"] = [*(metadata.get("finalizers") or []), kinds.CRD_CLEANUP_FINALIZER]

    def deleting(self, obj: dict[str, Any], old: dict[str, Any], ctx: RegistryContext) -> None:
        obj["status"] = kinds.crd_status(obj, old, ctx.now())


class ReviewStrategy(BuiltinKindStrategy):
    """The review APIs (TokenReview, SubjectAccessReview and the Self* reviews): answered from the same users and
    RBAC rules the request path uses, never stored."""

    def answer_create(self, namespace: str, obj: dict[str, Any], user: Any, ctx: RegistryContext) -> dict[str, Any]:
        from pyop.testing.authorization import Authorization, reviews  # authorization imports the registry

        users = getattr(ctx, "users", {})
        return reviews.answer(Authorization(ctx.store, users), self.resource_type, namespace, obj, user)


class RBACStrategy(BuiltinKindStrategy):
    name_rule: NameRule = "path-segment"  # ValidateRBACName: `system:discovery` is a name


_POD_SUBRESOURCES: dict[str, SubresourceStrategy] = {
    "ephemeralcontainers": EphemeralContainersStrategy(),
    "resize": ResizeStrategy(),
}
_BY_STORAGE_KEY: dict[str, type[BuiltinKindStrategy]] = {
    "namespaces": NamespaceStrategy,
    "pods": PodStrategy,
    "deployments.apps": DeploymentStrategy,
    "services": ServiceStrategy,
    "persistentvolumeclaims": PersistentVolumeClaimStrategy,
    "secrets": SecretStrategy,
    "jobs.batch": JobStrategy,
    csr_approval.CSR_KEY: CertificateSigningRequestStrategy,
    webhook_config.MUTATING_KEY: WebhookConfigurationStrategy,
    webhook_config.VALIDATING_KEY: WebhookConfigurationStrategy,
    kinds.CRD_STORAGE_KEY: CustomResourceDefinitionStrategy,
}
_BY_GROUP: dict[str, type[BuiltinKindStrategy]] = {"rbac.authorization.k8s.io": RBACStrategy}


def strategy_for(resource_type: ResourceType, builtin: BuiltinStrategy) -> RESTStrategy:
    """The strategy of one served resource of the test API server: its built-in kind's, or the schema strategy."""
    if resource_type.custom:
        from pyop.testing.crds.strategy import SchemaStrategy  # crds imports builtins

        return SchemaStrategy(resource_type)
    if resource_type.create_only:
        return ReviewStrategy(resource_type, builtin)
    kind_strategy = _BY_STORAGE_KEY.get(resource_type.storage_key) or _BY_GROUP.get(resource_type.group)
    return (kind_strategy or BuiltinKindStrategy)(resource_type, builtin)


__all__ = ["BuiltinKindStrategy", "strategy_for"]
