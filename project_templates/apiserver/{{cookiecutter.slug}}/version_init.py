{{ cookiecutter.license_header }}"""The {{ cookiecutter.version }} version of the {{ cookiecutter.qualified_group }} group, as the aggregated API server serves it.

Each kind is its model (<kind>_types.py) and its strategy (<kind>_strategy.py); `pyop create apiserver` adds them.
"""

from __future__ import annotations

from pyop.apiserver import APIGroupVersion, Resource

{{ cookiecutter.strategy_import }}
{{ cookiecutter.types_import }}

API_GROUP_VERSION = APIGroupVersion(
    "{{ cookiecutter.qualified_group }}",
    "{{ cookiecutter.version }}",
    [
        Resource({{ cookiecutter.kind }}, strategy={{ cookiecutter.kind }}Strategy()),
        # +kubebuilder:scaffold:apiserver-resources
    ],
)
