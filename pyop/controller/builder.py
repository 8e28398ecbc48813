"""The controller builder: controller-runtime's `builder.ControllerManagedBy(mgr).For(...)...Complete(r)`.

    manager.controller_for(Captain, predicates=[GenerationChanged()]) \
        .owns(ConfigMap) \
        .watches(Secret, secrets_to_captains) \
        .with_options(max_concurrent_reconciles=4) \
        .complete(CaptainReconciler(manager))

Kinds are given as pyop model classes, as `pyop.client.APIResource`s, or as built-in keys such as
`"apps/v1/Deployment"` (`pyop.client.BUILTIN`), so a controller can own built-in kinds without a model class.
The builder asks its host (the manager) for the shared informer of each kind; nothing runs before the manager
starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel

from pyop.client.resources import BUILTIN, APIResource, resource_for_model
from pyop.controller.controller import Controller
from pyop.controller.enqueue import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    EventHandler,
    MapFunc,
)
from pyop.controller.predicates import Predicate
from pyop.controller.reconcile import ReconcileFunc, Reconciler, Request
from pyop.controller.source import Source
from pyop.informers import Informer
from pyop.workqueue import RateLimiter

__all__ = ["Builder", "ControllerHost", "Target", "resolve_target"]

Target = type[BaseModel] | APIResource | str


def resolve_target(target: Target) -> APIResource:
    """The REST resource of a model class, an `APIResource`, or a `BUILTIN` key like `"v1/ConfigMap"`."""
    if isinstance(target, APIResource):
        return target
    if isinstance(target, str):
        try:
            return BUILTIN[target]
        except KeyError:
            raise ValueError(
                f"unknown built-in kind {target!r}: use a key of pyop.client.BUILTIN such as 'apps/v1/Deployment', "
                "a model class, or an APIResource"
            ) from None
    return resource_for_model(target)


class ControllerHost(Protocol):
    """What a builder needs from the manager."""

    def informer(self, target: Target) -> Informer: ...

    def new_controller(
        self,
        name: str,
        reconciler: Reconciler | ReconcileFunc,
        *,
        resource: APIResource,
        max_concurrent_reconciles: int | None,
        rate_limiter: RateLimiter[Request] | None,
        cache_sync_timeout: float | None,
        reconciliation_timeout: float | None,
    ) -> Controller: ...

    def add_controller(self, controller: Controller) -> None: ...


class Builder:
    """Collects what a controller watches and how, then builds and registers it with `complete`."""

    def __init__(self, host: ControllerHost, for_: Target, *, predicates: Sequence[Predicate] = ()) -> None:
        self._host = host
        self._for_target = for_
        self.resource = resolve_target(for_)
        self._for_predicates = tuple(predicates)
        self._watches: list[tuple[Target, APIResource, EventHandler, tuple[Predicate, ...]]] = []
        self._global_predicates: tuple[Predicate, ...] = ()
        self._name: str | None = None
        self._max_concurrent_reconciles: int | None = None
        self._rate_limiter: RateLimiter[Request] | None = None
        self._cache_sync_timeout: float | None = None
        self._reconciliation_timeout: float | None = None
        self._completed = False

    def owns(self, target: Target, *, predicates: Sequence[Predicate] = (), only_controller: bool = True) -> Builder:
        """Watch `target` objects and reconcile their controlling owner of the primary kind.

        With `only_controller=False` any owner reference to the primary kind counts, not only the controller.
        """
        owner = self.resource
        handler = EnqueueRequestForOwner(
            owner.group, owner.kind, owner_namespaced=owner.namespaced, only_controller=only_controller
        )
        self._watches.append((target, resolve_target(target), handler, tuple(predicates)))
        return self

    def watches(
        self, target: Target, handler: EventHandler | MapFunc, *, predicates: Sequence[Predicate] = ()
    ) -> Builder:
        """Watch `target` objects; `handler` is an `EventHandler` or a function `obj -> requests`."""
        event_handler = handler if isinstance(handler, EventHandler) else EnqueueRequestsFromMapFunc(handler)
        self._watches.append((target, resolve_target(target), event_handler, tuple(predicates)))
        return self

    def with_event_filter(self, *predicates: Predicate) -> Builder:
        """Predicates applied to every watch of this controller (in addition to each watch's own)."""
        self._global_predicates += predicates
        return self

    def named(self, name: str) -> Builder:
        """The controller's name (metrics, logs, queue); default: the primary kind in lower case."""
        self._name = name
        return self

    def with_options(
        self,
        *,
        max_concurrent_reconciles: int | None = None,
        rate_limiter: RateLimiter[Request] | None = None,
        cache_sync_timeout: float | None = None,
        reconciliation_timeout: float | None = None,
    ) -> Builder:
        """Worker count (default 1, as controller-runtime), a rate limiter for failures, cache sync timeout,
        and the seconds after which a running reconcile is cancelled (default: the manager's, none unless set)."""
        if max_concurrent_reconciles is not None:
            self._max_concurrent_reconciles = max_concurrent_reconciles
        if rate_limiter is not None:
            self._rate_limiter = rate_limiter
        if cache_sync_timeout is not None:
            self._cache_sync_timeout = cache_sync_timeout
        if reconciliation_timeout is not None:
            self._reconciliation_timeout = reconciliation_timeout
        return self

    def build(self, reconciler: Reconciler | ReconcileFunc) -> Controller:
        """Build the controller and register it with the manager (which starts it)."""
        if self._completed:
            raise RuntimeError("this builder already built its controller")
        self._completed = True
        name = self._name or self.resource.kind.lower()
        controller = self._host.new_controller(
            name,
            reconciler,
            resource=self.resource,
            max_concurrent_reconciles=self._max_concurrent_reconciles,
            rate_limiter=self._rate_limiter,
            cache_sync_timeout=self._cache_sync_timeout,
            reconciliation_timeout=self._reconciliation_timeout,
        )
        primary = Source(self.resource, EnqueueRequestForObject(), self._global_predicates + self._for_predicates)
        controller.watch(self._host.informer(self._for_target), primary)
        for target, resource, handler, predicates in self._watches:
            source = Source(resource, handler, self._global_predicates + predicates)
            controller.watch(self._host.informer(target), source)
        self._host.add_controller(controller)
        return controller

    def complete(self, reconciler: Reconciler | ReconcileFunc) -> Controller:
        """`build`, named as controller-runtime's `Complete`."""
        return self.build(reconciler)
