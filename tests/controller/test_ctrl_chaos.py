"""Chaos: 1,000 Widgets converge while watches drop, history expires (410), status writes conflict (409) and the
server fails (500), and specs keep changing underneath the controller."""

from __future__ import annotations

import asyncio

from ctrl_helpers import Widget, WidgetStatus, eventually, manager_for, widget

from pyop.controller import Request, Result, set_status_condition
from pyop.testing import TestAPIServer
from pyop.workqueue import BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter

COUNT = 1000
STORAGE_KEY = "widgets.ctrl.pyop.dev"


def converged(server: TestAPIServer) -> int:
    """How many stored Widgets report Ready for their current generation."""
    done = 0
    for obj in server.store.objects(STORAGE_KEY, "default"):
        for condition in (obj.get("status") or {}).get("conditions") or ():
            if (
                condition.get("type") == "Ready"
                and condition.get("status") == "True"
                and condition.get("observedGeneration") == obj["metadata"]["generation"]
                and condition.get("message") == f"size {obj['spec'].get('size', 0)}"
            ):
                done += 1
    return done


async def test_a_thousand_widgets_converge_under_faults(server: TestAPIServer) -> None:
    manager = manager_for(server, informer_options={"stall_timeout": 1.0})
    widgets = manager.lister(Widget)
    client = manager.client
    errors = 0

    async def reconcile(request: Request) -> Result:
        nonlocal errors
        current = widgets.get(request.name, request.namespace)
        if current is None:
            return Result()
        status = current.status or WidgetStatus()
        if set_status_condition(
            status.conditions,
            type="Ready",
            status=True,
            reason="Reconciled",
            message=f"size {current.spec.size}",
            observed_generation=current.metadata.generation,
        ):
            current.status = status
            try:
                await client.update_status(current)  # guarded by the cached resourceVersion: stale -> 409
            except Exception:
                errors += 1
                raise
        return Result()

    # Per-object exponential backoff as the default limiter, with a wider overall bucket than its 10 qps: the
    # hundreds of injected failures would otherwise only add seconds of waiting to this test.
    limiter = MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1.0), BucketRateLimiter(500, 500))
    manager.controller_for(Widget).with_options(max_concurrent_reconciles=8, rate_limiter=limiter).complete(reconcile)

    semaphore = asyncio.Semaphore(32)

    async def create(index: int) -> None:
        async with semaphore:
            await client.create(widget(f"w{index:04d}", size=index % 5))

    async with manager:
        await asyncio.gather(*(create(index) for index in range(COUNT // 2)))
        faults = server.faults
        faults.respond(409, method="PUT", path_regex=r"/widgets/[^/]+/status", times=150)
        faults.respond(500, method="PUT", path_regex=r"/widgets/[^/]+/status", times=100)
        faults.respond(500, method="GET", path_regex="watch=true", times=5)
        creating = asyncio.gather(*(create(index) for index in range(COUNT // 2, COUNT)))
        for round_ in range(6):
            await asyncio.sleep(0.1)
            faults.close_watches("widgets")
            if round_ in (1, 4):
                faults.compact()  # resuming watches now get 410 Gone: the informer must relist
            for index in range(round_ * 40, round_ * 40 + 40):  # spec changes: generation moves on
                await client.patch(Widget, f"w{index:04d}", {"spec": {"size": 10 + round_}}, "default")
        await creating
        faults.respond(500, method="GET", path_regex="widgets", times=3)
        await eventually(lambda: converged(server) == COUNT, timeout=60, message=f"{converged(server)}/{COUNT}")
        reflector = manager.informer(Widget).reflectors[0]
        assert reflector.stats.relists_after_gone >= 1 and reflector.stats.watches > 6
    assert errors >= 250  # every injected status failure reached the reconciler and was retried
    assert manager.metrics.value("controller_runtime_reconcile_errors_total", {"controller": "widget"}) == errors
