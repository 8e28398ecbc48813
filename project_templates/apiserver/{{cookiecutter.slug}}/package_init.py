{{ cookiecutter.license_header }}"""The aggregated API server of {{ cookiecutter.project_name }}: the group versions it serves behind kube-apiserver.

kube-aggregator proxies every request under /apis/<group>/<version> of these group versions here (config/apiserver
registers each with an APIService). `python -m {{ cookiecutter.package }}.apiserver` runs the server (`make run-apiserver`);
the tests/test_apiserver_*.py run it in-process behind pyop's test API server. `pyop create apiserver` adds the group
versions and kinds below; the kinds' models and strategies are in the packages next to this file.
"""

from __future__ import annotations

from pyop.apiserver import APIGroupVersion

{{ cookiecutter.group_version_import }}

GROUP_VERSIONS: list[APIGroupVersion] = [
    {{ cookiecutter.group_version_alias }},
    # +kubebuilder:scaffold:apiserver-groupversions
]
