{{ cookiecutter.license_header }}"""The {{ cookiecutter.kind }} API: the models below are the source of its CustomResourceDefinition.

Edit them, then run `make manifests` to regenerate the CRD. Fields are snake_case here and camelCase in YAML.
Validation can be written with pydantic (`Field(ge=1)`, `Literal[...]`) or with Kubebuilder markers in a comment
right above a field or class (`# +kubebuilder:validation:Minimum=1`); see the pyop docs for the full list.
"""

from __future__ import annotations

from pydantic import Field
from pyop.api import Condition, KubeModel, Resource, ResourceList

from .groupversion_info import GROUP_VERSION


class {{ cookiecutter.kind }}Spec(KubeModel):
    """The desired state of a {{ cookiecutter.kind }}."""

    # INSERT ADDITIONAL SPEC FIELDS - desired state of cluster.
    # Important: run "make manifests" to regenerate code after modifying this file.

    # foo is an example field of {{ cookiecutter.kind }}. Edit {{ cookiecutter.kind_module }}_types.py to remove or update it.
    # +optional
    foo: str | None = None


class {{ cookiecutter.kind }}Status(KubeModel):
    """The observed state of a {{ cookiecutter.kind }}."""

    # conditions represent the current state of the {{ cookiecutter.kind }} resource.
    # Each condition has a unique type and reflects the status of a specific aspect of the resource.
    #
    # Standard condition types include:
    # - "Available": the resource is fully functional
    # - "Progressing": the resource is being created or updated
    # - "Degraded": the resource failed to reach or maintain its desired state
    #
    # The status of each condition is one of True, False, or Unknown.
    # +listType=map
    # +listMapKey=type
    # +optional
    conditions: list[Condition] = Field(default_factory=list)


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
{%- if not cookiecutter.namespaced %}
# +kubebuilder:resource:scope=Cluster
{%- endif %}
{%- if cookiecutter.custom_plural %}
# +kubebuilder:resource:path={{ cookiecutter.plural }}
{%- endif %}
class {{ cookiecutter.kind }}(
    Resource,
    group_version=GROUP_VERSION,
{%- if cookiecutter.custom_plural %}
    plural="{{ cookiecutter.plural }}",
{%- endif %}
{%- if not cookiecutter.namespaced %}
    namespaced=False,
{%- endif %}
):
    """{{ cookiecutter.kind }} is the Schema for the {{ cookiecutter.plural }} API."""

    # spec defines the desired state of {{ cookiecutter.kind }}.
    # +required
    spec: {{ cookiecutter.kind }}Spec

    # status defines the observed state of {{ cookiecutter.kind }}.
    # +optional
    status: {{ cookiecutter.kind }}Status | None = None


# +kubebuilder:object:root=true
class {{ cookiecutter.kind }}List(ResourceList[{{ cookiecutter.kind }}]):
    """A list of {{ cookiecutter.kind }} objects."""
