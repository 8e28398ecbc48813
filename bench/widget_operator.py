"""The pyop operator that `bench_controller.py` measures, as a user writes it: a model, a reconciler reading the
lister, a manager. Run by the benchmark as ``widget_operator.main()`` with the namespace and the worker count as
arguments; it imports nothing but pyop (and pydantic), as an operator's own entry point does.
"""

from __future__ import annotations

import sys

GROUP = "bench.pyop.dev"
PLURAL = "widgets"


def run(namespace: str, workers: int) -> None:
    """A pyop operator as a user writes it: a model, a reconciler reading the lister, a manager."""
    from pydantic import Field

    from pyop.api import Condition, GroupVersion, KubeModel, Resource
    from pyop.controller import GenerationChanged, Request, Result, set_status_condition
    from pyop.manager import Manager, ManagerOptions
    from pyop.manager import run as run_manager

    class WidgetSpec(KubeModel):
        size: int = 0
        image: str = ""

    class WidgetStatus(KubeModel):
        conditions: list[Condition] = Field(default_factory=list)

    class Widget(Resource, group_version=GroupVersion(GROUP, "v1")):
        spec: WidgetSpec = Field(default_factory=WidgetSpec)
        status: WidgetStatus | None = None

    manager = Manager(
        ManagerOptions(
            namespaces=[namespace],
            metrics_bind_address="0",
            health_probe_bind_address="0",
            log_format="console",
            log_level="warning",
        )
    )
    widgets = manager.lister(Widget)
    client = manager.client
    reconciles = 0

    class WidgetReconciler:
        async def reconcile(self, request: Request) -> Result:
            nonlocal reconciles
            reconciles += 1
            widget = widgets.get(request.name, request.namespace)
            if widget is None:
                return Result()
            conditions = list(widget.status.conditions) if widget.status else []
            if set_status_condition(
                conditions,
                type="Ready",
                status=True,
                reason="Reconciled",
                message="widget is ready",
                observed_generation=widget.metadata.generation,
            ):
                await client.patch_status(
                    Widget,
                    request.name,
                    {"status": {"conditions": [condition.to_dict() for condition in conditions]}},
                    request.namespace,
                )
            return Result()

    (
        manager.controller_for(Widget, predicates=[GenerationChanged()])  # our own status writes need no reconcile
        .with_options(max_concurrent_reconciles=workers)
        .complete(WidgetReconciler())
    )
    try:
        run_manager(manager.run())
    finally:
        print(f"RECONCILES {reconciles}", flush=True)


def main() -> None:
    """``NAMESPACE WORKERS`` from the command line (the benchmark passes both)."""
    namespace, workers = sys.argv[1], int(sys.argv[2])
    run(namespace, workers)
