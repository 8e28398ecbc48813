"""The kinds of the tests' aggregated API server: wardle.example.com/v1alpha1, after Kubernetes' sample-apiserver.

A Flunder (namespaced, with status and printer columns) and a Fischer (cluster-scoped), written as a pyop project
writes CRD models; `FlunderStrategy` fills every hook.
"""

from __future__ import annotations

from pyop.api import GroupVersion, KubeModel, Resource
from pyop.apiserver.strategy import FieldError, Strategy

GROUP_VERSION = GroupVersion("wardle.example.com", "v1alpha1")


class FlunderSpec(KubeModel):
    # The name of another flunder (or fischer) this one refers to.
    reference: str | None = None
    # +kubebuilder:validation:Minimum=0
    # +kubebuilder:validation:Maximum=100
    size: int = 1


class FlunderStatus(KubeModel):
    phase: str | None = None
    observed_size: int | None = None


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:subresource:scale:specpath=.spec.size,statuspath=.status.observedSize
# +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=".spec.size"
# +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase"
class Flunder(Resource, group_version=GROUP_VERSION):
    spec: FlunderSpec = FlunderSpec()
    status: FlunderStatus | None = None


class FischerSpec(KubeModel):
    disallowed_flunders: list[str] = []


# +kubebuilder:object:root=true
# +kubebuilder:resource:scope=Cluster
class Fischer(Resource, group_version=GROUP_VERSION, namespaced=False):
    spec: FischerSpec = FischerSpec()


class FlunderStrategy(Strategy[Flunder]):
    """sample-apiserver's rules, and a label the server sets."""

    def prepare_for_create(self, obj: Flunder) -> None:
        obj.metadata.labels = {**(obj.metadata.labels or {}), "wardle.example.com/created-by": "strategy"}

    def default(self, obj: Flunder) -> None:
        if obj.spec.reference == "":
            obj.spec.reference = None

    def validate(self, obj: Flunder) -> list[FieldError]:
        if obj.spec.reference and obj.spec.reference == obj.metadata.name:
            return [FieldError.invalid("spec.reference", obj.spec.reference, "a flunder may not refer to itself")]
        return []

    def validate_update(self, obj: Flunder, old: Flunder) -> list[FieldError]:
        errors = self.validate(obj)
        if old.spec.reference and obj.spec.reference != old.spec.reference:
            errors.append(FieldError.forbidden("spec.reference", "may not change once set"))
        return errors
