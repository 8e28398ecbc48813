"""What importing the runtime costs: an operator's start-up imports pyop.manager and pyop.controller, and neither
may pull in kubernetes_asyncio's generated client nor aiohttp (its server side is needed only later, if at all;
its client never: the runtime's HTTP is its own), and loading a kubeconfig adds neither, nor urllib3; a running
manager that serves nothing loads no metrics library, test server or generator code either.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from mgr_helpers import Widget

from pyop.api import ObjectMeta
from pyop.client import Client
from pyop.testing import TestAPIServer


def test_importing_the_runtime_leaves_heavy_optional_modules_unimported(tmp_path: Path) -> None:
    code = (
        "import sys, asyncio, pyop.manager, pyop.controller, pyop.client, pyop.informers; "
        "heavy = ('kubernetes_asyncio', 'aiohttp', 'urllib3'); "
        "print(' '.join(sorted(name for name in sys.modules if name.startswith(heavy)))); "
        "config = asyncio.run(pyop.client.load_config(sys.argv[1])); "
        "print('|', ' '.join(sorted(name for name in sys.modules if name.startswith(heavy))))"
    )
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://10.0.0.1:6443'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(kubeconfig)], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["|"]


# What a manager serving no metrics, probes or webhooks must not load while it starts and reconciles: none of them
# is needed there, and each costs start-up (prometheus_client ~20 ms: its exposition module brings http.server,
# wsgiref and email; leader election is off; the others are other packages' servers, generators or certificate code).
NOT_AT_START = (
    "prometheus_client",
    "pyop.testing",
    "pyop.apiserver",
    "pyop.webhook",
    "pyop_scaffold",
    "pyop.manager.metrics_server",
    "pyop.manager.metrics_auth",
    "pyop.leaderelection",
    "pyop.clientset",
    "pyop.client.clientset",
    "pyop.schema",
    "cryptography",
    "aiohttp",
    "kubernetes",
    "kubernetes_asyncio",
    "jinja2",
    "typer",
)

OPERATOR = """
import sys
from pydantic import Field
from pyop.api import Condition, GroupVersion, KubeModel, Resource
from pyop.controller import GenerationChanged, Request, Result, set_status_condition
from pyop.manager import Manager, ManagerOptions, run

class WidgetStatus(KubeModel):
    conditions: list[Condition] = Field(default_factory=list)

class Widget(Resource, group_version=GroupVersion("mgr.pyop.dev", "v1")):
    spec: dict = Field(default_factory=dict)
    status: WidgetStatus | None = None

manager = Manager(ManagerOptions(kubeconfig=sys.argv[1], log_level="warning"))
widgets = manager.lister(Widget)

async def reconcile(request: Request) -> Result:
    widget = widgets.get(request.name, request.namespace)
    conditions = list(widget.status.conditions) if widget.status else []
    set_status_condition(conditions, type="Ready", status=True, reason="Reconciled", message="ready")
    await manager.client.patch_status(
        Widget, request.name, {"status": {"conditions": [c.to_dict() for c in conditions]}}, request.namespace
    )
    print(" ".join(sorted(sys.modules)), flush=True)
    manager.stop()
    return Result()

manager.controller_for(Widget, predicates=[GenerationChanged()]).complete(reconcile)
run(manager.run())
"""


async def test_a_manager_serving_nothing_loads_no_metrics_server_or_test_code(
    server: TestAPIServer, tmp_path: Path
) -> None:
    """Structural, not timed: the modules loaded by a running operator's first reconcile (after its status write)."""
    async with Client(server.client_config()) as client:
        await client.create(Widget(metadata=ObjectMeta(name="w", namespace="default")))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", OPERATOR, str(server.kubeconfig_path), stdout=asyncio.subprocess.PIPE
    )
    async with asyncio.timeout(60):
        stdout, _ = await process.communicate()
    assert process.returncode == 0
    loaded = stdout.decode().split()
    assert "pyop.manager.manager" in loaded and "pyop.informers.reflector" in loaded  # it did run
    assert sorted(name for name in loaded if name.startswith(NOT_AT_START)) == []
    # The typed models of built-in kinds load per kind, when a kind is used; this operator uses none of them.
    assert sorted(name for name in loaded if name.startswith("pyop.api.k8s.")) == ["pyop.api.k8s._index"]
    async with Client(server.client_config()) as client:
        written = await client.get(Widget, "w", "default")
    assert written.status is not None and written.status.conditions[0].type == "Ready"
