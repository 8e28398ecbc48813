{{ cookiecutter.license_header }}"""The {{ cookiecutter.kind }} API, served by the project's aggregated API server (not a CustomResourceDefinition).

The models follow the same conventions as a CRD's: the server builds the kind's OpenAPI schema from them with the
walk `make manifests` uses for CRDs, then prunes, defaults and validates every write with it, serves it at
/openapi/v2 and /openapi/v3, and prints the +kubebuilder:printcolumn markers in `kubectl get`. Fields are
snake_case here and camelCase in YAML. Validation can be written with pydantic (`Field(ge=1)`, `Literal[...]`) or
with Kubebuilder markers in a comment right above a field or class (`# +kubebuilder:validation:Minimum=1`); what
needs code (defaults that depend on other fields, checks across fields, immutability) goes in
{{ cookiecutter.kind_module }}_strategy.py.
"""

from __future__ import annotations

from pydantic import Field
from pyop.api import Condition, KubeModel, Resource, ResourceList

from .groupversion_info import GROUP_VERSION


class {{ cookiecutter.kind }}Spec(KubeModel):
    """The desired state of a {{ cookiecutter.kind }}."""

    # INSERT ADDITIONAL SPEC FIELDS - desired state of the object.

    # foo is an example field of {{ cookiecutter.kind }}. Edit {{ cookiecutter.kind_module }}_types.py to remove or update it.
    # +optional
    foo: str | None = None


class {{ cookiecutter.kind }}Status(KubeModel):
    """The observed state of a {{ cookiecutter.kind }}."""

    # conditions represent the current state of the {{ cookiecutter.kind }} resource.
    # +listType=map
    # +listMapKey=type
    # +optional
    conditions: list[Condition] = Field(default_factory=list)


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
{%- if not cookiecutter.namespaced %}
# +kubebuilder:resource:scope=Cluster
{%- endif %}
class {{ cookiecutter.kind }}(
    Resource,
    group_version=GROUP_VERSION,
{%- if not cookiecutter.namespaced %}
    namespaced=False,
{%- endif %}
):
    """{{ cookiecutter.kind }} is the Schema for the {{ cookiecutter.plural }} API."""

    # spec defines the desired state of {{ cookiecutter.kind }}.
    # +required
    spec: {{ cookiecutter.kind }}Spec

    # status defines the observed state of {{ cookiecutter.kind }}; clients write it through the status
    # subresource ({{ cookiecutter.plural }}/status) only.
    # +optional
    status: {{ cookiecutter.kind }}Status | None = None


# +kubebuilder:object:root=true
class {{ cookiecutter.kind }}List(ResourceList[{{ cookiecutter.kind }}]):
    """A list of {{ cookiecutter.kind }} objects."""
