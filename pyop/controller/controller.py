"""The controller: watch sources feed a rate-limited work queue; worker tasks run the reconciler.

controller-runtime's `internal/controller` semantics, kept on purpose because operators depend on them:

* a reconcile for one object never runs twice at once (the work queue hands an item to one worker at a time,
  and an event arriving meanwhile queues one more reconcile for afterwards);
* an exception is a failed reconcile: the request comes back after the rate limiter's per-object backoff
  (5 ms, 10 ms, 20 ms, ... up to 1000 s, and 10 qps overall), and no exception ever ends a worker;
* success `forget`s the object's failure history; `Result(requeue_after=...)` looks again after a fixed delay;
  `Result(requeue=True)` after the backoff; `TerminalError` is logged and counted but not retried;
* every log line written during a reconcile carries controller, namespace, name and reconcile id;
* with a `reconciliation_timeout`, a reconcile still running after it is cancelled and counts as a failure
  (`controller_runtime_reconcile_timeouts_total`), so one hung object cannot hold a worker for ever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from pyop.controller.reconcile import ReconcileFunc, Reconciler, Request, Result, TerminalError
from pyop.controller.source import BoundSource, Source
from pyop.informers import Informer
from pyop.log import reset_log_values, set_log_values
from pyop.metrics.controller import ControllerMetrics, ReconcileResult
from pyop.uids import RandomUIDs
from pyop.workqueue import Clock, MetricsProvider, RateLimiter, RateLimitingQueue, ShutDown

__all__ = ["Controller", "ControllerNotSynced"]

log = logging.getLogger("pyop.controller")

_ZERO_RESULT = Result()


# controller-runtime gives every reconcile a UUID for its log lines; `str(uuid.uuid4())` reads the kernel's random
# source and builds a UUID object each time, about 2% of a reconcile's CPU: the same strings, made in batches.
_reconcile_ids = RandomUIDs()


class ControllerNotSynced(RuntimeError):
    """A controller's informers did not finish their first list within the cache sync timeout."""


def _is_terminal(error: BaseException) -> bool:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, TerminalError):
            return True
        seen = seen.__cause__
    return False


class Controller:
    """Runs one reconciler for requests coming from its sources.

    Built by `pyop.controller.Builder` (through `manager.controller_for(...)`) in normal use; usable alone in
    tests: add sources with `watch`, then `await start()` and `await stop()`.
    """

    def __init__(
        self,
        name: str,
        reconciler: Reconciler | ReconcileFunc,
        *,
        max_concurrent_reconciles: int = 1,
        rate_limiter: RateLimiter[Request] | None = None,
        metrics: ControllerMetrics | None = None,
        queue_metrics_provider: MetricsProvider | None = None,
        clock: Clock | None = None,
        group: str = "",
        kind: str = "",
        cache_sync_timeout: float = 120.0,
        reconciliation_timeout: float | None = None,
    ) -> None:
        if max_concurrent_reconciles < 1:
            raise ValueError(f"max_concurrent_reconciles must be at least 1, got {max_concurrent_reconciles}")
        if reconciliation_timeout is not None and reconciliation_timeout <= 0:
            raise ValueError(f"reconciliation_timeout must be positive seconds or None, got {reconciliation_timeout}")
        self.name = name
        self.reconciler = reconciler
        self._reconcile = reconciler.reconcile if isinstance(reconciler, Reconciler) else reconciler
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.cache_sync_timeout = cache_sync_timeout
        self.reconciliation_timeout = reconciliation_timeout
        self.queue: RateLimitingQueue[Request] = RateLimitingQueue(
            rate_limiter, name=name, clock=clock, metrics_provider=queue_metrics_provider
        )
        self.metrics = metrics
        self.sources: list[BoundSource] = []
        self._log_base: dict[str, Any] = {"controller": name}
        if group or kind:
            self._log_base.update(controllerGroup=group, controllerKind=kind)
        self._workers: list[asyncio.Task[None]] = []
        self._started = False

    # setup

    def watch(self, informer: Informer, source: Source) -> None:
        """Add a source; its events reach the queue once the controller starts."""
        if self._started:
            raise RuntimeError(f"controller {self.name!r}: add watches before it starts")
        self.sources.append(BoundSource(source, informer))

    @property
    def started(self) -> bool:
        return self._started

    @property
    def active_workers(self) -> int:
        return sum(1 for task in self._workers if not task.done())

    # lifecycle

    async def start(self) -> None:
        """Register the sources, wait for their caches, start the workers; returns once they run.

        Raises `ControllerNotSynced` if an informer has not listed within `cache_sync_timeout`.
        """
        if self._started:
            raise RuntimeError(f"controller {self.name!r} was already started")
        self._started = True
        token = set_log_values(self._log_base)
        try:
            for bound in self.sources:
                log.info("Starting EventSource", extra={"source": f"kind source: {bound.source.resource.kind}"})
                bound.attach(self.queue.add)
            log.info("Starting Controller")
            informers = {id(bound.informer): bound.informer for bound in self.sources}.values()
            synced = await asyncio.gather(*(informer.wait_for_sync(self.cache_sync_timeout) for informer in informers))
            if not all(synced):
                self._detach()
                raise ControllerNotSynced(
                    f"controller {self.name!r}: timed out after {self.cache_sync_timeout}s waiting for caches to sync"
                )
            log.info("Starting workers", extra={"worker count": self.max_concurrent_reconciles})
            self._workers = [
                asyncio.create_task(self._worker(), name=f"{self.name} worker {index}")
                for index in range(self.max_concurrent_reconciles)
            ]
        finally:
            reset_log_values(token)

    async def stop(self, timeout: float | None = None) -> bool:
        """Stop taking events, let the workers finish what is queued, then end them.

        Waits at most `timeout` seconds for the queue to drain (None: as long as it takes); reconciles still
        running then are cancelled. Returns whether the queue drained in time.
        """
        token = set_log_values(self._log_base)
        try:
            self._detach()
            log.info("Shutdown signal received, waiting for all workers to finish")
            drained = True
            try:
                async with asyncio.timeout(timeout):
                    await self.queue.shut_down_with_drain()
            except TimeoutError:
                drained = False
                self.queue.shut_down()
                log.warning("Work queue not drained within %.1fs: cancelling reconciles in progress", timeout)
            workers, self._workers = self._workers, []
            if not drained:
                for task in workers:
                    task.cancel()
            for task in workers:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            log.info("All workers finished")
            return drained
        finally:
            reset_log_values(token)

    def _detach(self) -> None:
        for bound in self.sources:
            bound.detach()

    # work

    async def _worker(self) -> None:
        queue = self.queue
        while True:
            try:
                request = await queue.get()
            except ShutDown:
                return
            try:
                await self.reconcile_handler(request)
            finally:
                queue.done(request)

    async def reconcile_handler(self, request: Request) -> None:
        """Reconcile one request and decide, from the outcome, whether and when it comes back."""
        queue = self.queue
        metrics = self.metrics
        reconcile_id = _reconcile_ids.next()
        token = set_log_values(
            {**self._log_base, "namespace": request.namespace, "name": request.name, "reconcileID": reconcile_id}
        )
        if metrics is not None:
            metrics.active_workers.inc()
        started = time.perf_counter()
        deadline = asyncio.timeout(self.reconciliation_timeout) if self.reconciliation_timeout else None
        try:
            if deadline is None:
                result = await self._reconcile(request)
            else:
                async with deadline:
                    result = await self._reconcile(request)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if deadline is not None and deadline.expired():
                if metrics is not None:
                    metrics.timeouts.inc()
                log.error("Reconcile timed out", extra={"timeout": self.reconciliation_timeout})
            if _is_terminal(error):
                if metrics is not None:
                    metrics.terminal_errors.inc()
            else:
                queue.add_rate_limited(request)
            if metrics is not None:
                metrics.errors.inc()
                metrics.count(ReconcileResult.ERROR)
            log.error("Reconciler error", exc_info=True)
        else:
            if result is None:
                result = _ZERO_RESULT
            after = result.requeue_after_seconds
            if after > 0:
                queue.forget(request)
                queue.add_after(request, after)
                outcome = ReconcileResult.REQUEUE_AFTER
            elif result.requeue:
                queue.add_rate_limited(request)
                outcome = ReconcileResult.REQUEUE
            else:
                queue.forget(request)
                outcome = ReconcileResult.SUCCESS
            if metrics is not None:
                metrics.count(outcome)
            if log.isEnabledFor(logging.DEBUG):
                log.debug("Reconcile done", extra={"result": outcome})
        finally:
            if metrics is not None:
                metrics.reconcile_time.observe(time.perf_counter() - started)
                metrics.active_workers.dec()
            reset_log_values(token)

    def __repr__(self) -> str:
        return f"Controller(name={self.name!r}, workers={self.max_concurrent_reconciles}, queue={self.queue!r})"
