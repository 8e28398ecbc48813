{{ cookiecutter.license_header }}"""The {{ cookiecutter.kind }} controller against pyop's test API server (no cluster needed).

The test loads the project's CRDs (`make manifests` writes them), runs a manager with this controller, creates
the sample from config/samples and waits for the reconciler to report it Available.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from pyop.controller import find_status_condition
from pyop.manager import Manager, ManagerOptions
from pyop.testing import TestAPIServer

from {{ cookiecutter.types_module }} import {{ cookiecutter.kind }}
from {{ cookiecutter.controller_module }} import TYPE_AVAILABLE, setup_with_manager

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CRD_DIR = PROJECT_ROOT / "config" / "crd" / "bases"
SAMPLE = PROJECT_ROOT / "config" / "samples" / "{{ cookiecutter.group }}_{{ cookiecutter.version }}_{{ cookiecutter.kind_lower }}.yaml"


async def wait_until_available(manager: Manager, name: str, namespace: str | None) -> {{ cookiecutter.kind }}:
    """Poll the API server until the Available condition is True (the timeout only guards against a hang)."""
    async with asyncio.timeout(30):
        while True:
            current = await manager.client.get({{ cookiecutter.kind }}, name, namespace)
            conditions = current.status.conditions if current.status else None
            condition = find_status_condition(conditions, TYPE_AVAILABLE)
            if condition is not None and condition.status == "True":
                return current
            await asyncio.sleep(0.05)


async def test_sample_{{ cookiecutter.kind_module }}_becomes_available(test_api_server: TestAPIServer) -> None:
    if not list(CRD_DIR.glob("*.yaml")):
        pytest.fail("no CRDs in config/crd/bases: run `make manifests` first")
    test_api_server.load_crds(CRD_DIR)
    manager = Manager(ManagerOptions(kubeconfig=test_api_server.kubeconfig_path, handle_signals=False))
    setup_with_manager(manager)
    sample = {{ cookiecutter.kind }}.model_validate(yaml.safe_load(SAMPLE.read_text()))
{%- if cookiecutter.namespaced %}
    sample.metadata.namespace = sample.metadata.namespace or "default"
{%- endif %}

    async with manager:
        created = await manager.client.create(sample)
        reconciled = await wait_until_available(manager, created.metadata.name, created.metadata.namespace)

    condition = find_status_condition(reconciled.status.conditions, TYPE_AVAILABLE)
    assert condition is not None and condition.reason == "Reconciled"
    assert condition.observed_generation == reconciled.metadata.generation
