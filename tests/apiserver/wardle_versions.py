"""A kind in two versions for the tests of conversion: Widget at wardle.example.com/v1 (the hub, stored) and at
v1alpha1 (a spoke), which calls v1's ``spec.replicas`` ``spec.size`` and keeps v1's ``spec.colour`` in an
annotation (so an object written at v1 reads back unchanged after a trip through v1alpha1)."""

from __future__ import annotations

from typing import Self

from pyop.api import GroupVersion, KubeModel, ObjectMeta, Resource
from pyop.apiserver import APIGroupVersion
from pyop.apiserver import Resource as Served
from pyop.apiserver.strategy import FieldError, Strategy
from pyop.webhook import Hub

GROUP = "wardle.example.com"
V1 = GroupVersion(GROUP, "v1")
V1ALPHA1 = GroupVersion(GROUP, "v1alpha1")
COLOUR = "wardle.example.com/colour"
REFUSED = "refuse-conversion"


class WidgetSpec(KubeModel):
    # +kubebuilder:validation:Minimum=0
    replicas: int = 1
    colour: str = "plain"


class WidgetStatus(KubeModel):
    ready_replicas: int | None = None


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=".spec.replicas"
class Widget(Resource, Hub, group_version=V1):
    spec: WidgetSpec = WidgetSpec()
    status: WidgetStatus | None = None


class WidgetSpecV1Alpha1(KubeModel):
    size: int = 1


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=".spec.size"
class WidgetV1Alpha1(Resource, group_version=V1ALPHA1, kind="Widget"):
    spec: WidgetSpecV1Alpha1 = WidgetSpecV1Alpha1()
    status: WidgetStatus | None = None

    def convert_to(self) -> Widget:
        if self.metadata.name == REFUSED:
            raise ValueError("this widget cannot be converted")
        annotations = dict(self.metadata.annotations or {})
        colour = annotations.pop(COLOUR, "plain")
        metadata = self.metadata.model_copy(update={"annotations": annotations or None})
        return Widget(metadata=metadata, spec=WidgetSpec(replicas=self.spec.size, colour=colour), status=self.status)

    @classmethod
    def convert_from(cls, hub: Widget) -> Self:
        annotations = dict(hub.metadata.annotations or {})
        if hub.spec.colour != "plain":
            annotations[COLOUR] = hub.spec.colour
        metadata: ObjectMeta = hub.metadata.model_copy(update={"annotations": annotations or None})
        return cls(metadata=metadata, spec=WidgetSpecV1Alpha1(size=hub.spec.replicas), status=hub.status)


class WidgetV1Alpha1Strategy(Strategy[WidgetV1Alpha1]):
    """v1alpha1's own rule (checked on writes at v1alpha1 only)."""

    def validate(self, obj: WidgetV1Alpha1) -> list[FieldError]:
        if obj.spec.size == 13:
            return [FieldError.invalid("spec.size", 13, "unlucky")]
        return []


def widget_groups() -> list[APIGroupVersion]:
    return [
        APIGroupVersion(GROUP, "v1", [Served(Widget)]),
        APIGroupVersion(GROUP, "v1alpha1", [Served(WidgetV1Alpha1, strategy=WidgetV1Alpha1Strategy())]),
    ]
