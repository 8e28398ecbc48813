"""The manager: one process's client, shared caches, controllers, leader election, probes and metrics.

controller-runtime's `manager.Manager`. `run()` goes through these steps:

1. load the configuration (kubeconfig or in-cluster) and start the probe and metrics servers, and the webhook
   server when webhooks are registered (on every replica: the API server calls any of them);
2. start the shared informers on every replica, leader or not, so a new leader starts with warm caches;
   `/readyz` reports `cache-sync` failed until they have all listed;
3. with leader election, wait for the Lease; then start the controllers (each waits for its caches) while
   renewing the Lease; losing it stops the controllers at once and `run()` raises `LeaderElectionLost`
   (the process should exit and be restarted, as a Go manager does);
4. on SIGTERM/SIGINT or `stop()`: stop taking events, drain the work queues within
   `graceful_shutdown_timeout`, release the Lease if asked to, stop informers and servers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from pyop import gcpolicy
from pyop.client import Client, ClientConfig, Transport, load_config
from pyop.client.kubeconfig import SERVICE_ACCOUNT_DIR
from pyop.client.resources import APIResource
from pyop.controller.builder import Builder, Target, resolve_target
from pyop.controller.controller import Controller
from pyop.controller.events import EventBroadcaster, EventRecorder
from pyop.controller.predicates import Predicate
from pyop.controller.reconcile import ReconcileFunc, Reconciler, Request
from pyop.informers import Informer, Lister, SharedInformerFactory, strip_managed_fields
from pyop.log import configure_logging
from pyop.manager.certwatcher import CertWatcher
from pyop.manager.listen import HTTPServer, parse_bind_address
from pyop.manager.options import ManagerOptions
from pyop.manager.probes import Check, HealthProbes
from pyop.manager.signals import install_signal_handlers
from pyop.metrics import MetricsRegistry
from pyop.workqueue import RateLimiter

if TYPE_CHECKING:
    from pyop.leaderelection import LeaderElector
    from pyop.webhook.builder import WebhookBuilder
    from pyop.webhook.server import WebhookServer

__all__ = ["LeaderElectionLost", "Manager"]

log = logging.getLogger("pyop.manager")

M = TypeVar("M", bound=BaseModel)

_NOT_CONNECTED = "http://pyop-manager-not-connected.invalid"
Runnable = Callable[[], Awaitable[Any]]


class LeaderElectionLost(RuntimeError):
    """This replica stopped leading (it could not renew the Lease in time); exit and let it restart."""


class Manager:
    """Builds controllers (`controller_for`), shares caches (`lister`, `informer`) and runs it all (`run`).

    `manager.client` may be kept at setup time: it connects when the manager starts (or on `await connect()`).
    Use `async with manager:` to run it in the background (tests), or `await manager.run()` in `main`.
    """

    def __init__(self, options: ManagerOptions | None = None) -> None:
        self.options = options = options if options is not None else ManagerOptions()
        self._connected = options.config is not None
        self.client = Client(Transport(options.config or ClientConfig(server=_NOT_CONNECTED)))
        self.metrics = MetricsRegistry(options.metrics_registry)
        informer_options: dict[str, Any] = {"transform": strip_managed_fields, **options.informer_options}
        if options.resync_period is not None:
            informer_options["resync_period"] = options.resync_period
        self.informers = SharedInformerFactory(
            self.client, namespaces=list(options.namespaces) if options.namespaces else None, **informer_options
        )
        self.events = EventBroadcaster(self.client.dynamic)
        self.probes = HealthProbes()
        self.probes.add_readyz_check("cache-sync", self._caches_synced)
        self.controllers: list[Controller] = []
        self._runnables: list[tuple[Runnable, bool]] = []
        self._tasks: list[asyncio.Task[Any]] = []
        self._started_controllers: list[Controller] = []
        self._servers: list[HTTPServer] = []
        self._certificate_dir: Path | None = None
        self._elector: LeaderElector | None = None
        self._renew_task: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self._leadership_lost = False
        self._informers_started = False
        self._running = False
        self._run_task: asyncio.Task[None] | None = None
        self._stop_event = asyncio.Event()
        self.started = asyncio.Event()
        """Set once servers and informers run (controllers may still be waiting for the Lease)."""
        self.elected = asyncio.Event()
        """Set when this replica leads (at once without leader election); controllers start then."""
        self.probe_server: HTTPServer | None = None
        self.metrics_server: HTTPServer | None = None
        self.metrics_cert_watcher: CertWatcher | None = None
        self.webhook_server: WebhookServer | None = None
        """Created by the first `webhook_for(...).complete()`; started by `run()` on every replica."""

    # wiring (before run)

    def informer(self, target: Target) -> Informer:
        """The shared informer of a kind (model class, APIResource or BUILTIN key)."""
        return self.informers.informer(resolve_target(target))

    def lister(self, model: type[M]) -> Lister[M]:
        """A typed, read-only view of the shared cache of `model` (what reconcilers read)."""
        return Lister(self.informer(model).store, model)

    def controller_for(self, target: Target, *, predicates: Sequence[Predicate] = ()) -> Builder:
        """Start building a controller whose primary kind is `target`; finish with `.complete(reconciler)`."""
        return Builder(self, target, predicates=predicates)

    def webhook_for(self, model: type[M]) -> WebhookBuilder[M]:
        """Start registering `model`'s defaulting, validation or conversion webhooks; finish with `.complete()`."""
        from pyop.webhook.builder import WebhookBuilder

        return WebhookBuilder(self, model)

    def get_webhook_server(self) -> WebhookServer:
        """The webhook server (made on first use, with the `webhook` readiness check: false until it listens)."""
        if self.webhook_server is None:
            if self._running:
                raise RuntimeError("register webhooks before the manager runs")
            from pyop.webhook.server import WebhookServer

            options = self.options
            server = WebhookServer(
                host=options.webhook_host,
                port=options.webhook_port,
                cert_dir=options.webhook_cert_path,
                cert_name=options.webhook_cert_name,
                key_name=options.webhook_key_name,
                cert_watch_interval=options.webhook_cert_watch_interval,
                registry=self.metrics.registry,
                header_timeout=options.http_header_timeout,
                idle_timeout=options.http_idle_timeout,
            )
            self.webhook_server = server
            self.probes.add_readyz_check("webhook", lambda: server.started)
        return self.webhook_server

    def new_controller(
        self,
        name: str,
        reconciler: Reconciler | ReconcileFunc,
        *,
        resource: APIResource,
        max_concurrent_reconciles: int | None = None,
        rate_limiter: RateLimiter[Request] | None = None,
        cache_sync_timeout: float | None = None,
        reconciliation_timeout: float | None = None,
    ) -> Controller:
        """A controller bound to this manager's metrics (called by the builder)."""
        if any(controller.name == name for controller in self.controllers):
            raise ValueError(
                f"a controller named {name!r} already exists: give the new one another name with .named(...)"
            )
        workers = max_concurrent_reconciles or self.options.max_concurrent_reconciles
        return Controller(
            name,
            reconciler,
            max_concurrent_reconciles=workers,
            rate_limiter=rate_limiter,
            metrics=self.metrics.controller_metrics(name, workers),
            queue_metrics_provider=self.metrics.workqueue_provider,
            group=resource.group,
            kind=resource.kind,
            cache_sync_timeout=cache_sync_timeout or self.options.cache_sync_timeout,
            reconciliation_timeout=reconciliation_timeout or self.options.reconciliation_timeout,
        )

    def add_controller(self, controller: Controller) -> None:
        """Run `controller` while this replica leads."""
        if self._running:
            raise RuntimeError("add controllers before the manager runs")
        self.controllers.append(controller)

    def add_runnable(self, runnable: Runnable, *, needs_leader_election: bool = True) -> None:
        """Run `await runnable()` as a task (only while leading, unless told otherwise); it is cancelled at
        shutdown, and if it raises, the manager stops with that error."""
        if self._running:
            raise RuntimeError("add runnables before the manager runs")
        self._runnables.append((runnable, needs_leader_election))

    def event_recorder(self, name: str) -> EventRecorder:
        """An event recorder whose events name `name` as their source component."""
        return self.events.recorder(name)

    def add_healthz_check(self, name: str, check: Check) -> None:
        self.probes.add_healthz_check(name, check)

    def add_readyz_check(self, name: str, check: Check) -> None:
        self.probes.add_readyz_check(name, check)

    # lifecycle

    async def connect(self) -> None:
        """Load the configuration (kubeconfig or in-cluster) into the client; `run` does it too."""
        if not self._connected:
            self.client.transport.config = await load_config(self.options.kubeconfig, self.options.context)
            self._connected = True

    def stop(self) -> None:
        """Ask a running manager to shut down gracefully (what SIGTERM does)."""
        self._stop_event.set()

    async def run(self) -> None:
        """Run until `stop()` or a signal; raises `LeaderElectionLost` or a controller's start failure."""
        if self._running:
            raise RuntimeError("the manager is already running")
        self._running = True
        options = self.options
        if options.log_format is not None:
            configure_logging(options.log_format, options.log_level)
        uninstall_signals: Callable[[], None] | None = None
        # The process's long-lived objects (modules, models, then the caches as they fill) are frozen out of the
        # collector's scans while the manager runs, as while an API server serves: the same process-wide policy
        # (counted with the servers'), so full collections no longer walk the caches. One full collection took
        # ~35 ms of a 2,000-object converge's ~0.8 s of operator CPU in bench/bench_controller.py.
        gcpolicy.serving_starts()
        try:
            if options.handle_signals:
                uninstall_signals = install_signal_handlers(self.stop)
            await self.connect()
            await self._start_servers()
            self.events.start()
            self.informers.start()
            self._informers_started = True
            self._start_runnables(needs_leader_election=False)
            self.started.set()
            if options.leader_election:
                self._spawn(self._lead(), "leader election")
            else:
                self.elected.set()
                self._spawn(self._start_controllers(), "controllers")
                self._start_runnables(needs_leader_election=True)
            await self._stop_event.wait()
        finally:
            try:
                await self._shutdown()
            finally:
                gcpolicy.serving_ends()
            if uninstall_signals is not None:
                uninstall_signals()
        if self._failure is not None:
            raise self._failure

    async def __aenter__(self) -> Manager:
        """Run in a background task; returns once servers and informers are up."""
        self._run_task = asyncio.create_task(self.run(), name="manager")
        started = asyncio.create_task(self.started.wait())
        await asyncio.wait({self._run_task, started}, return_when=asyncio.FIRST_COMPLETED)
        if self._run_task.done():
            started.cancel()
            self._run_task.result()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop()
        if self._run_task is not None:
            await self._run_task

    # internals

    def _spawn(self, coroutine: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coroutine)
        task.set_name(name)
        task.add_done_callback(self._on_task_done)
        self._tasks.append(task)
        return task

    def _on_task_done(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if error is not None and self._failure is None:
            if not isinstance(error, LeaderElectionLost):
                log.error("%s failed; stopping the manager", task.get_name(), exc_info=error)
            self._failure = error
            self.stop()

    def _start_runnables(self, *, needs_leader_election: bool) -> None:
        for runnable, leader_only in self._runnables:
            if leader_only == needs_leader_election:
                self._spawn(runnable(), f"runnable {getattr(runnable, '__name__', runnable)!r}")

    async def _start_controllers(self) -> None:
        async def start(controller: Controller) -> None:
            self._started_controllers.append(controller)
            await controller.start()

        await asyncio.gather(*(start(controller) for controller in self.controllers))

    async def _lead(self) -> None:
        elector = self._elector = self._new_elector()
        await elector.acquire()
        self.elected.set()
        self._renew_task = asyncio.create_task(elector.keep_leading(), name="lease renewal")
        self._spawn(self._start_controllers(), "controllers")
        self._start_runnables(needs_leader_election=True)
        # Shielded: a shutdown cancels this task first, but the Lease must be renewed until the controllers
        # have drained, or another replica could start leading while this one still reconciles.
        await asyncio.shield(self._renew_task)
        self._leadership_lost = True
        raise LeaderElectionLost(f"leader election lost: could not renew lease {elector.lock.describe()} in time")

    def _new_elector(self) -> LeaderElector:
        # Imported here: a manager without leader election (a single replica, `make run`) never needs it.
        from pyop.leaderelection import LeaderElector, LeaseLock, default_identity

        options = self.options
        if not options.leader_election_id:
            raise ValueError("leader election needs a leader_election_id (the Lease name)")
        namespace = options.leader_election_namespace or self._default_lease_namespace()
        lock = LeaseLock(
            self.client.dynamic,
            namespace,
            options.leader_election_id,
            options.leader_election_identity or default_identity(),
        )
        return LeaderElector(
            lock,
            lease_duration=options.lease_duration,
            renew_deadline=options.renew_deadline,
            retry_period=options.retry_period,
            metrics=self.metrics.leader_election,
        )

    def _default_lease_namespace(self) -> str:
        """The pod's namespace in a cluster; otherwise the kubeconfig context's namespace (`make run`)."""
        namespace_file = SERVICE_ACCOUNT_DIR / "namespace"
        with contextlib.suppress(OSError):
            namespace = namespace_file.read_text().strip()
            if namespace:
                return namespace
        return self.client.config.namespace or "default"

    def _caches_synced(self) -> bool:
        return self._informers_started and all(informer.has_synced for informer in self.informers.informers)

    async def _start_servers(self) -> None:
        options = self.options
        probe_address = parse_bind_address(options.health_probe_bind_address)
        if probe_address is not None:
            self.probe_server = HTTPServer(
                self.probes.app(),
                probe_address,
                header_timeout=options.http_header_timeout,
                idle_timeout=options.http_idle_timeout,
            )
            self._servers.append(self.probe_server)
            await self.probe_server.start()
            log.info("starting health probes server", extra={"addr": self.probe_server.url})
        metrics_address = parse_bind_address(options.metrics_bind_address)
        if metrics_address is not None:
            # Imported here: they bring aiohttp's server side, which a manager serving nothing never needs.
            from pyop.manager.metrics_auth import KubernetesAuth
            from pyop.manager.metrics_server import metrics_app, server_ssl_context

            ssl_context = None
            auth = None
            if options.metrics_secure:
                certificate, key = self._metrics_certificate()
                ssl_context = server_ssl_context(certificate, key)
                auth = KubernetesAuth(self.client.dynamic)
                if options.metrics_cert_path:  # renewed in place by cert-manager: served from the files as they are
                    self.metrics_cert_watcher = CertWatcher(
                        ssl_context, certificate, key, interval=options.metrics_cert_watch_interval
                    )
                    self._spawn(self.metrics_cert_watcher.run(), "metrics certificate watcher")
                if options.enable_http2:
                    log.info("HTTP/2 was asked for, but the metrics server speaks HTTP/1.1 only")
            self.metrics_server = HTTPServer(
                metrics_app(self.metrics.registry, auth),
                metrics_address,
                ssl_context=ssl_context,
                header_timeout=options.http_header_timeout,
                idle_timeout=options.http_idle_timeout,
            )
            self._servers.append(self.metrics_server)
            await self.metrics_server.start()
            log.info(
                "starting metrics server", extra={"addr": self.metrics_server.url, "secure": options.metrics_secure}
            )
        await self._start_webhook_server()

    async def _start_webhook_server(self) -> None:
        server = self.webhook_server
        if server is None or not server.endpoints:
            return
        await server.start()
        if self.options.enable_http2:
            log.info("HTTP/2 was asked for, but the webhook server speaks HTTP/1.1 only")
        assert server.cert_watcher is not None
        self._spawn(server.cert_watcher.run(), "webhook certificate watcher")
        log.info("starting webhook server", extra={"addr": server.url, "paths": sorted(server.endpoints)})

    def _metrics_certificate(self) -> tuple[Path, Path]:
        options = self.options
        if options.metrics_cert_path:
            folder = Path(options.metrics_cert_path)
            return folder / options.metrics_cert_name, folder / options.metrics_key_name
        from pyop.manager.certificates import write_self_signed_certificate

        self._certificate_dir = Path(tempfile.mkdtemp(prefix="pyop-metrics-certs-"))
        log.info("no metrics certificate given (--metrics-cert-path): serving a self-signed one")
        return write_self_signed_certificate(self._certificate_dir)

    async def _shutdown(self) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.options.graceful_shutdown_timeout
        lost = self._leadership_lost
        if self._started_controllers:
            log.info("stopping controllers", extra={"drain": not lost})
        for task in self._tasks:
            if task.get_name() in ("leader election", "controllers") and not task.done():
                task.cancel()
        await asyncio.gather(
            *(
                controller.stop(0 if lost else max(0.0, deadline - loop.time()))
                for controller in self._started_controllers
            ),
            return_exceptions=True,
        )
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._renew_task is not None and not self._renew_task.done():
            self._renew_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renew_task
        if self._elector is not None and self.options.leader_election_release_on_cancel and not lost:
            await self._elector.release()
        await self.events.stop(timeout=max(0.1, min(5.0, deadline - loop.time())))
        await self.informers.shutdown()
        self._informers_started = False
        for server in self._servers:
            await server.stop()
        self._servers.clear()
        if self.webhook_server is not None:
            await self.webhook_server.stop()
        await self.client.close()
        if self._certificate_dir is not None:
            shutil.rmtree(self._certificate_dir, ignore_errors=True)
            self._certificate_dir = None
        log.info("manager stopped")
