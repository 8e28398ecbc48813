{{ cookiecutter.license_header }}"""The {{ cookiecutter.kind }} controller against pyop's test API server (no cluster needed).

The test runs a manager with this controller, creates a {{ cookiecutter.kind }} and waits until the reconciler has seen it.
{%- if cookiecutter.external %}
The test server does not know {{ cookiecutter.kind }}: a stand-in CRD accepting any {{ cookiecutter.kind }} is served, built from the
model's group, version, plural and scope (TODO(user): load the real CRD instead, `test_api_server.load_crds(path)`).
{%- endif %}
"""

from __future__ import annotations

import asyncio
import logging
{%- if cookiecutter.external %}
from typing import Any
{%- endif %}

{{ cookiecutter.controller_test_imports }}

# TODO(user): the smallest {{ cookiecutter.kind }} its schema accepts; make it one your controller acts on.
SAMPLE = {{ cookiecutter.sample_object }}
{%- if cookiecutter.external %}


def stand_in_crd() -> dict[str, Any]:
    """A CRD serving {{ cookiecutter.kind }} with any content, for a test server that has no {{ cookiecutter.kind }} CRD."""
    info = {{ cookiecutter.kind }}.resource_info
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{info.plural}.{info.group}"},
        "spec": {
            "group": info.group,
            "names": {"kind": info.kind, "plural": info.plural, "listKind": f"{info.kind}List"},
            "scope": "Namespaced" if info.namespaced else "Cluster",
            "versions": [
                {
                    "name": info.version,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
{%- endif %}


async def test_the_reconciler_sees_a_created_{{ cookiecutter.kind_module }}(
    test_api_server: TestAPIServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="{{ cookiecutter.controller_module }}")
{%- if cookiecutter.external %}
    test_api_server.add_crd(stand_in_crd())
{%- endif %}
    manager = Manager(ManagerOptions(kubeconfig=test_api_server.kubeconfig_path, handle_signals=False))
    setup_with_manager(manager)
    obj = {{ cookiecutter.kind }}.model_validate(SAMPLE)
{%- if cookiecutter.external %}
    if {{ cookiecutter.kind }}.resource_info.namespaced:
        obj.metadata.namespace = obj.metadata.namespace or "default"
{%- elif cookiecutter.namespaced %}
    obj.metadata.namespace = obj.metadata.namespace or "default"
{%- endif %}

    async with manager:
        created = await manager.client.create(obj)
{%- if cookiecutter.external %}
        namespace = created.metadata.namespace
        key = f"{namespace}/{created.metadata.name}" if namespace else created.metadata.name
{%- elif cookiecutter.namespaced %}
        key = f"{created.metadata.namespace}/{created.metadata.name}"
{%- else %}
        key = created.metadata.name
{%- endif %}
        expected = f"reconciled {{ cookiecutter.kind }} {key}"
        async with asyncio.timeout(30):  # only guards against a hang
            while expected not in caplog.messages:
                await asyncio.sleep(0.05)
