"""The generated built-in models in a running manager: owned, watched and written with no register_model call."""

from __future__ import annotations

from ctrl_helpers import Widget, eventually, manager_for, widget

from pyop.api import ObjectMeta
from pyop.api.k8s.apps.v1 import Deployment, DeploymentSpec
from pyop.api.k8s.core.v1 import Container, PodSpec, PodTemplateSpec
from pyop.api.k8s.meta.v1 import LabelSelector
from pyop.client.resources import BUILTIN
from pyop.controller import OperationResult, Request, Result, create_or_update, set_controller_reference
from pyop.testing import TestAPIServer


async def test_a_controller_owns_generated_deployments(server: TestAPIServer) -> None:
    manager = manager_for(server)
    results: list[OperationResult] = []
    requests: list[Request] = []

    async def reconcile(request: Request) -> Result:
        requests.append(request)
        owner = await manager.client.get(Widget, request.name, request.namespace)

        def desired(deployment: Deployment) -> None:
            labels = {"app": request.name}
            if deployment.spec is None:
                template = PodTemplateSpec(
                    metadata=ObjectMeta(labels=labels),
                    spec=PodSpec(containers=[Container(name="app", image="nginx:1.27")]),
                )
                deployment.spec = DeploymentSpec(selector=LabelSelector(match_labels=labels), template=template)
            deployment.spec.replicas = owner.spec.size
            set_controller_reference(owner, deployment)

        key = Deployment(metadata=ObjectMeta(name=request.name, namespace=request.namespace))
        _, result = await create_or_update(manager.client, key, desired)
        results.append(result)
        return Result()

    manager.controller_for(Widget).owns(Deployment).complete(reconcile)
    async with manager:
        await manager.client.create(widget("web", size=2))
        await eventually(lambda: OperationResult.CREATED in results, message="deployment created")
        stored = await manager.client.dynamic.get(BUILTIN["apps/v1/Deployment"], "web", "default")
        assert stored["spec"]["replicas"] == 2
        assert stored["metadata"]["ownerReferences"][0]["kind"] == "Widget"
        # A field the controller never sets, written by someone else, survives the controller's next update.
        stored["spec"]["minReadySeconds"] = 9
        await manager.client.dynamic.update(BUILTIN["apps/v1/Deployment"], stored)
        owner = await manager.client.get(Widget, "web", "default")
        owner.spec.size = 4
        await manager.client.update(owner)
        await eventually(lambda: OperationResult.UPDATED in results, message="deployment updated")
        stored = await manager.client.dynamic.get(BUILTIN["apps/v1/Deployment"], "web", "default")
        assert stored["spec"]["replicas"] == 4 and stored["spec"]["minReadySeconds"] == 9
        deployment = await manager.client.get(Deployment, "web", "default")
        assert deployment.metadata.creation_timestamp is not None
        assert deployment.spec is not None and deployment.spec.min_ready_seconds == 9
