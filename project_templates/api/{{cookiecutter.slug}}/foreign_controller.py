{{ cookiecutter.license_header }}"""The {{ cookiecutter.kind }} controller: reconciles {{ cookiecutter.kind }} objects, a kind this project does not define.

{% if cookiecutter.external -%}
{{ cookiecutter.kind }} is an external kind ({{ cookiecutter.qualified_group }}/{{ cookiecutter.version }}): its model comes from `{{ cookiecutter.types_module }}`, and
its CRD is installed by the project that owns it, not by this one's config/crd.
{%- else -%}
{{ cookiecutter.kind }} is a built-in Kubernetes kind ({{ cookiecutter.qualified_group or "core" }}/{{ cookiecutter.version }}): its model is pyop's, generated
from the Kubernetes OpenAPI definitions, and it keeps every field it does not declare when written back.
{%- endif %}
The `+kubebuilder:rbac` markers below become rules of config/rbac/role.yaml when you run `make manifests`;
trim the verbs to what the controller does, and add one for every other kind it reads or writes.
"""

from __future__ import annotations

import logging

{{ cookiecutter.controller_imports }}

# +kubebuilder:rbac:groups={{ cookiecutter.rbac_group }},resources={{ cookiecutter.plural }},verbs=get;list;watch;create;update;patch;delete
{%- if cookiecutter.has_status %}
# +kubebuilder:rbac:groups={{ cookiecutter.rbac_group }},resources={{ cookiecutter.plural }}/status,verbs=get;update;patch
{%- endif %}
# +kubebuilder:rbac:groups={{ cookiecutter.rbac_group }},resources={{ cookiecutter.plural }}/finalizers,verbs=update

log = logging.getLogger(__name__)


class {{ cookiecutter.kind }}Reconciler:
    """Moves the cluster towards what you want for each {{ cookiecutter.kind }}.

    Reconciling is level-triggered: any change to a {{ cookiecutter.kind }} queues its name, and `reconcile` looks at
    the current state, not at the event. Raising an exception retries the request with exponential backoff;
    returning `Result(requeue_after=...)` looks again later.
    """

    def __init__(self, manager: Manager) -> None:
        self.client = manager.client
        self.lister = manager.lister({{ cookiecutter.kind }})

    async def reconcile(self, request: Request) -> Result:
        obj = self.lister.get(request.name, namespace=request.namespace)
        if obj is None:
            # Deleted (or not yet in the cache): nothing to do.
            return Result()

        # TODO(user): your logic here. The object is not this project's: change only the fields you manage
        # (pyop.controller.create_or_patch() does), so what others set stays as they set it.
        log.info("reconciled {{ cookiecutter.kind }} %s", request)
        return Result()


def setup_with_manager(manager: Manager) -> None:
    """Register the controller: it watches {{ cookiecutter.kind }} objects and runs the reconciler."""
    manager.controller_for({{ cookiecutter.kind }}).complete({{ cookiecutter.kind }}Reconciler(manager))
