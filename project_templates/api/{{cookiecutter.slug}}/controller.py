{{ cookiecutter.license_header }}"""The {{ cookiecutter.kind }} controller: reconciles {{ cookiecutter.kind }} objects.

The `+kubebuilder:rbac` markers below become rules of config/rbac/role.yaml when you run `make manifests`;
add one for every kind this controller reads or writes.
"""

from __future__ import annotations

import logging

from pyop.controller import Request, Result, set_status_condition
from pyop.manager import Manager

from {{ cookiecutter.types_module }} import {{ cookiecutter.kind }}, {{ cookiecutter.kind }}Status

# +kubebuilder:rbac:groups={{ cookiecutter.qualified_group }},resources={{ cookiecutter.plural }},verbs=get;list;watch;create;update;patch;delete
# +kubebuilder:rbac:groups={{ cookiecutter.qualified_group }},resources={{ cookiecutter.plural }}/status,verbs=get;update;patch
# +kubebuilder:rbac:groups={{ cookiecutter.qualified_group }},resources={{ cookiecutter.plural }}/finalizers,verbs=update

log = logging.getLogger(__name__)

# The condition this controller reports. Kubebuilder's conventional types are "Available", "Progressing" and
# "Degraded"; each is True, False or Unknown.
TYPE_AVAILABLE = "Available"


class {{ cookiecutter.kind }}Reconciler:
    """Moves the cluster towards what a {{ cookiecutter.kind }} declares and reports progress in its status.

    Reconciling is level-triggered: any change to a {{ cookiecutter.kind }} (or to what it owns) queues its name,
    and `reconcile` looks at the current state, not at the event. Raising an exception retries the request
    with exponential backoff; returning `Result(requeue_after=...)` looks again later.
    """

    def __init__(self, manager: Manager) -> None:
        self.client = manager.client
        self.lister = manager.lister({{ cookiecutter.kind }})

    async def reconcile(self, request: Request) -> Result:
        obj = self.lister.get(request.name, namespace=request.namespace)
        if obj is None:
            # Deleted: objects it owned are garbage-collected through their owner references.
            return Result()

        # TODO(user): your logic here: create or update what this {{ cookiecutter.kind }} asks for, e.g. with
        # pyop.controller.create_or_update() and set_controller_reference(), and watch those kinds with
        # .owns(...) in setup_with_manager below.

        status = obj.status or {{ cookiecutter.kind }}Status()
        changed = set_status_condition(
            status.conditions,
            type=TYPE_AVAILABLE,
            status=True,
            reason="Reconciled",
            message="{{ cookiecutter.kind }} reconciled",
            observed_generation=obj.metadata.generation,
        )
        if changed:
            obj.status = status
            # Sent with the resourceVersion read from the cache: if the object changed meanwhile, the API server
            # answers 409 Conflict, the exception requeues the request, and the retry reads the newer object.
            await self.client.update_status(obj)
            log.info("{{ cookiecutter.kind }} is available")
        return Result()


def setup_with_manager(manager: Manager) -> None:
    """Register the controller: it watches {{ cookiecutter.kind }} objects and runs the reconciler."""
    manager.controller_for({{ cookiecutter.kind }}).complete({{ cookiecutter.kind }}Reconciler(manager))
