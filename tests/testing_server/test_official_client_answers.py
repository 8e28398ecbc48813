"""Issue 12's behaviours, driven by the official `kubernetes` client instead of pyop's own.

A server that only pyop's client talks to can agree with pyop's client and still differ from kube-apiserver. Here
each behaviour the issue lists is sent by the official client (its models, its serialisation, its error type) and
the answer is checked against what kube-apiserver documents: the status code, the reason, the causes and their field
paths, and the stored object read back through the client's own models (which also proves our responses deserialise
into them). The expected texts are kube-apiserver's (v1.33 source: registry strategies, apimachinery validation,
the fieldmanager, the garbage collector).

The client is synchronous; each call runs in a thread while the server serves in the test's event loop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from pyop.testing import TestAPIServer
from testing_server.helpers import eventually, official_client

kubernetes = pytest.importorskip("kubernetes", reason="the official kubernetes client drives these tests")
client = kubernetes.client
ApiException = kubernetes.client.exceptions.ApiException

T = TypeVar("T")
APPLY = "application/apply-patch+yaml"


async def call(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await asyncio.to_thread(function, *args, **kwargs)


async def refusal(function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    """The status code and the Status body of a call that must fail."""
    try:
        await call(function, *args, **kwargs)
    except ApiException as error:
        return error.status, json.loads(error.body)
    raise AssertionError(f"{function.__name__} succeeded; kube-apiserver refuses it")


async def raw(
    api: Any, method: str, path: str, body: Any = None, **query: str
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """A request through the client's own transport, for bodies its models refuse to build (it validates them
    client-side): the status, the decoded body and the response headers."""

    def send() -> tuple[int, dict[str, Any], dict[str, str]]:
        method_, url, headers, payload, _ = api.param_serialize(
            method, path, query_params=list(query.items()), body=body, auth_settings=["BearerToken"],
            header_params={"Content-Type": "application/json", "Accept": "application/json"},
        )  # fmt: skip
        response = api.call_api(method_, url, header_params=headers, body=payload)
        response.read()
        return response.status, json.loads(response.data), dict(response.getheaders())

    return await asyncio.to_thread(send)


def causes(status: dict[str, Any]) -> list[tuple[str, str]]:
    return [(cause.get("reason", ""), cause.get("field", "")) for cause in status["details"].get("causes", [])]


def deployment(name: str = "web", *, labels: dict[str, str] | None = None, image: str = "nginx:1.27") -> Any:
    labels = labels or {"app": name}
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1DeploymentSpec(
            selector=client.V1LabelSelector(match_labels={"app": name}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(containers=[client.V1Container(name="main", image=image)]),
            ),
        ),
    )


@pytest.fixture
def core(server: TestAPIServer) -> Any:
    return client.CoreV1Api(official_client(server))


@pytest.fixture
def apps(server: TestAPIServer) -> Any:
    return client.AppsV1Api(official_client(server))


# 1. API defaulting --------------------------------------------------------------------------------------------------


async def test_a_minimal_deployment_reads_back_with_kube_apiservers_defaults(apps: Any) -> None:
    stored = await call(apps.create_namespaced_deployment, "default", deployment(image="nginx"))
    spec = stored.spec
    assert (spec.replicas, spec.revision_history_limit, spec.progress_deadline_seconds) == (1, 10, 600)
    assert spec.strategy.type == "RollingUpdate"
    assert (spec.strategy.rolling_update.max_surge, spec.strategy.rolling_update.max_unavailable) == ("25%", "25%")
    pod = spec.template.spec
    assert (pod.restart_policy, pod.dns_policy, pod.scheduler_name) == ("Always", "ClusterFirst", "default-scheduler")
    assert pod.termination_grace_period_seconds == 30
    container = pod.containers[0]
    assert container.image_pull_policy == "Always"  # no tag: latest, so Always (IfNotPresent for a tagged image)
    assert (container.termination_message_path, container.termination_message_policy) == (
        "/dev/termination-log",
        "File",
    )
    # What the client reads is what the next GET returns: a "desired != stored" loop sees the same object.
    again = await call(apps.read_namespaced_deployment, "web", "default")
    assert again.spec == stored.spec


async def test_a_tagged_image_is_pulled_if_not_present(apps: Any) -> None:
    stored = await call(apps.create_namespaced_deployment, "default", deployment(image="nginx:1.27"))
    assert stored.spec.template.spec.containers[0].image_pull_policy == "IfNotPresent"


async def test_a_service_reads_back_with_cluster_ip_type_affinity_and_port_defaults(core: Any) -> None:
    body = client.V1Service(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1ServiceSpec(selector={"app": "web"}, ports=[client.V1ServicePort(port=80)]),
    )
    stored = await call(core.create_namespaced_service, "default", body)
    spec = stored.spec
    assert (spec.type, spec.session_affinity, spec.internal_traffic_policy) == ("ClusterIP", "None", "Cluster")
    assert spec.cluster_ip and spec.cluster_ip != "None" and spec.cluster_ips == [spec.cluster_ip]
    assert (spec.ip_families, spec.ip_family_policy) == (["IPv4"], "SingleStack")
    port = spec.ports[0]
    assert (port.protocol, port.target_port) == ("TCP", 80)


# 2. generation per kind ---------------------------------------------------------------------------------------------


async def test_config_maps_have_no_generation_and_deployments_count_spec_changes(core: Any, apps: Any) -> None:
    config_map = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="settings"), data={"k": "1"})
    created = await call(core.create_namespaced_config_map, "default", config_map)
    created.data = {"k": "2"}
    updated = await call(core.replace_namespaced_config_map, "settings", "default", created)
    assert (created.metadata.generation, updated.metadata.generation) == (None, None)

    first = await call(apps.create_namespaced_deployment, "default", deployment())
    labelled = await call(apps.patch_namespaced_deployment, "web", "default", {"metadata": {"labels": {"a": "b"}}})
    scaled = await call(apps.patch_namespaced_deployment, "web", "default", {"spec": {"replicas": 3}})
    assert (first.metadata.generation, labelled.metadata.generation, scaled.metadata.generation) == (1, 1, 2)


# 3. server-side apply -----------------------------------------------------------------------------------------------


def applied_config_map(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": data}


async def test_apply_of_a_field_another_manager_owns_is_a_conflict_unless_forced(core: Any) -> None:
    patch = core.patch_namespaced_config_map
    await call(patch, "applied", "default", applied_config_map(k="a"), field_manager="first", _content_type=APPLY)
    code, status = await refusal(
        patch, "applied", "default", applied_config_map(k="b"), field_manager="second", _content_type=APPLY
    )
    assert (code, status["reason"]) == (409, "Conflict")
    assert causes(status) == [("FieldManagerConflict", ".data.k")]
    assert status["details"]["causes"][0]["message"] == 'conflict with "first"'
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "first": .data.k'

    forced = await call(
        patch, "applied", "default", applied_config_map(k="b"), field_manager="second", force=True,
        _content_type=APPLY,
    )  # fmt: skip
    assert forced.data == {"k": "b"}
    owners = {entry.manager: entry.fields_v1 for entry in forced.metadata.managed_fields}
    assert owners["second"] == {"f:data": {"f:k": {}}}
    assert "first" not in owners  # it owned only .data.k, which was taken from it


async def test_a_field_its_manager_stops_applying_is_removed(core: Any) -> None:
    patch = core.patch_namespaced_config_map
    await call(patch, "applied", "default", applied_config_map(a="1", b="2"), field_manager="me", _content_type=APPLY)
    shrunk = await call(patch, "applied", "default", applied_config_map(a="1"), field_manager="me", _content_type=APPLY)
    assert shrunk.data == {"a": "1"}


async def test_applied_containers_merge_by_name_across_managers(apps: Any) -> None:
    def with_container(name: str) -> dict[str, Any]:
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": name, "image": f"{name}:1"}]},
                },
            },
        }

    patch = apps.patch_namespaced_deployment
    await call(patch, "web", "default", with_container("main"), field_manager="app", _content_type=APPLY)
    merged = await call(patch, "web", "default", with_container("sidecar"), field_manager="mesh", _content_type=APPLY)
    assert [c.name for c in merged.spec.template.spec.containers] == ["main", "sidecar"]


# 4. decoding into the kind's type -----------------------------------------------------------------------------------


CONFIG_MAPS = "/api/v1/namespaces/default/configmaps"


async def test_a_config_map_value_that_is_not_a_string_is_a_bad_request(core: Any) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n"}, "data": {"n": 3}}
    code, status, _ = await raw(core.api_client, "POST", CONFIG_MAPS, body)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert "ConfigMap.data of type string" in status["message"]


async def test_secret_data_that_is_not_base64_is_a_bad_request(core: Any) -> None:
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "not base64!"}}
    code, status, _ = await raw(core.api_client, "POST", "/api/v1/namespaces/default/secrets", body)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert "illegal base64 data" in status["message"]


async def test_unknown_fields_of_a_built_in_kind_are_refused_under_strict_and_dropped_otherwise(core: Any) -> None:
    def body(name: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {}, "color": "red"}

    code, status, _ = await raw(core.api_client, "POST", CONFIG_MAPS, body("strict"), fieldValidation="Strict")
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "color"'
    )
    code, kept, headers = await raw(core.api_client, "POST", CONFIG_MAPS, body("warned"), fieldValidation="Warn")
    assert code == 201 and "color" not in kept
    assert headers["Warning"] == '299 - "unknown field \\"color\\""'
    stored = await call(core.read_namespaced_config_map, "warned", "default")  # the client's model reads it
    assert stored.metadata.name == "warned"


# 5. validation ------------------------------------------------------------------------------------------------------


async def test_a_deployment_whose_selector_misses_its_template_is_invalid(apps: Any) -> None:
    code, status = await refusal(apps.create_namespaced_deployment, "default", deployment(labels={"app": "other"}))
    assert (code, status["reason"]) == (422, "Invalid")
    assert ("FieldValueInvalid", "spec.template.metadata.labels") in causes(status)


async def test_a_label_value_that_is_not_valid_is_invalid(core: Any) -> None:
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c", labels={"tier": "not valid!"}))
    code, status = await refusal(core.create_namespaced_config_map, "default", body)
    assert (code, status["reason"]) == (422, "Invalid")
    assert causes(status) == [("FieldValueInvalid", "metadata.labels")]


async def test_a_deployments_selector_cannot_change(apps: Any) -> None:
    await call(apps.create_namespaced_deployment, "default", deployment())
    patch = {
        "spec": {
            "selector": {"matchLabels": {"app": "web", "x": "y"}},
            "template": {"metadata": {"labels": {"app": "web", "x": "y"}}},
        }
    }
    code, status = await refusal(apps.patch_namespaced_deployment, "web", "default", patch)
    assert (code, status["reason"]) == (422, "Invalid")
    assert ("FieldValueInvalid", "spec.selector") in causes(status)
    assert "field is immutable" in status["message"]


async def test_an_immutable_config_maps_data_cannot_change(core: Any) -> None:
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="frozen"), data={"k": "1"}, immutable=True)
    await call(core.create_namespaced_config_map, "default", body)
    code, status = await refusal(core.patch_namespaced_config_map, "frozen", "default", {"data": {"k": "2"}})
    assert (code, status["reason"]) == (422, "Invalid")
    assert ("FieldValueForbidden", "data") in causes(status)


async def test_an_owner_reference_without_uid_is_invalid(core: Any) -> None:
    owner = client.V1OwnerReference(api_version="v1", kind="ConfigMap", name="owner", uid="")
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owned", owner_references=[owner]))
    code, status = await refusal(core.create_namespaced_config_map, "default", body)
    assert (code, status["reason"]) == (422, "Invalid")
    assert ("FieldValueInvalid", "metadata.ownerReferences.uid") in causes(status)


# 6. quantities ------------------------------------------------------------------------------------------------------


async def test_quantities_read_back_in_canonical_form(apps: Any) -> None:
    body = deployment()
    body.spec.template.spec.containers[0].resources = client.V1ResourceRequirements(
        requests={"cpu": "1000m", "memory": "1024Mi"}, limits={"cpu": "1.5", "memory": "1.5Gi"}
    )
    stored = await call(apps.create_namespaced_deployment, "default", body)
    resources = stored.spec.template.spec.containers[0].resources
    assert resources.requests == {"cpu": "1", "memory": "1Gi"}
    assert resources.limits == {"cpu": "1500m", "memory": "1536Mi"}


# 7. authorization ---------------------------------------------------------------------------------------------------


async def test_a_service_account_without_rbac_is_forbidden_until_a_role_allows_it(
    server: TestAPIServer, core: Any
) -> None:
    await call(core.create_namespaced_service_account, "default", client.V1ServiceAccount(metadata={"name": "robot"}))
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
    token = (await call(core.create_namespaced_service_account_token, "robot", "default", request)).status.token
    robot = client.CoreV1Api(official_client(server, token))

    code, status = await refusal(robot.list_namespaced_pod, "default")
    assert (code, status["reason"]) == (403, "Forbidden")
    assert status["message"] == (
        'pods is forbidden: User "system:serviceaccount:default:robot" cannot list resource "pods" in API group ""'
        ' in the namespace "default"'
    )

    rbac = client.RbacAuthorizationV1Api(core.api_client)
    role = client.V1Role(
        metadata=client.V1ObjectMeta(name="pod-reader"),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["pods"], verbs=["get", "list", "watch"])],
    )
    await call(rbac.create_namespaced_role, "default", role)
    binding = client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name="robot-reads-pods"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="pod-reader"),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name="robot", namespace="default")],
    )
    await call(rbac.create_namespaced_role_binding, "default", binding)
    assert (await call(robot.list_namespaced_pod, "default")).items == []

    review = client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(
            resource_attributes=client.V1ResourceAttributes(namespace="default", verb="delete", resource="pods")
        )
    )
    answer = await call(client.AuthorizationV1Api(robot.api_client).create_self_subject_access_review, review)
    assert answer.status.allowed is False


# 8. garbage collection ----------------------------------------------------------------------------------------------


async def test_a_dependent_of_an_owner_that_never_existed_is_collected(core: Any) -> None:
    owner = client.V1OwnerReference(
        api_version="v1", kind="ConfigMap", name="ghost", uid="0a0a0a0a-0000-4000-8000-000000000000"
    )
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="orphan", owner_references=[owner]))
    await call(core.create_namespaced_config_map, "default", body)

    async def gone() -> bool:
        names = [item.metadata.name for item in (await call(core.list_namespaced_config_map, "default")).items]
        return "orphan" not in names

    await eventually(gone, "the dependent of a missing owner deleted")


async def test_an_owner_in_another_namespace_is_absent_and_the_dependent_gets_an_event(core: Any) -> None:
    await call(core.create_namespace, client.V1Namespace(metadata=client.V1ObjectMeta(name="elsewhere")))
    owner = await call(core.create_namespaced_config_map, "elsewhere", client.V1ConfigMap(metadata={"name": "owner"}))
    reference = client.V1OwnerReference(api_version="v1", kind="ConfigMap", name="owner", uid=owner.metadata.uid)
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="dependent", owner_references=[reference]))
    await call(core.create_namespaced_config_map, "default", body)

    async def warned() -> bool:
        events = (await call(core.list_namespaced_event, "default")).items
        return any(event.reason == "OwnerRefInvalidNamespace" and event.type == "Warning" for event in events)

    await eventually(warned, "an OwnerRefInvalidNamespace event")

    async def collected() -> bool:
        names = [item.metadata.name for item in (await call(core.list_namespaced_config_map, "default")).items]
        return "dependent" not in names

    await eventually(collected, "the dependent of an owner in another namespace deleted")


# 9. metadata and lifecycle answers ----------------------------------------------------------------------------------


async def test_a_resource_version_on_create_is_refused(core: Any) -> None:
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c", resource_version="5"))
    code, status = await refusal(core.create_namespaced_config_map, "default", body)
    assert code == 500
    assert status["message"] == "resourceVersion should not be set on objects to be created"


async def test_a_uid_in_an_update_body_is_a_precondition(core: Any) -> None:
    created = await call(core.create_namespaced_config_map, "default", client.V1ConfigMap(metadata={"name": "c"}))
    created.metadata.uid = "0a0a0a0a-0000-4000-8000-000000000000"
    code, status = await refusal(core.replace_namespaced_config_map, "c", "default", created)
    assert (code, status["reason"]) == (409, "Conflict")
    assert status["message"].startswith('Operation cannot be fulfilled on configmaps "c": Precondition failed: UID')


async def test_creating_in_a_terminating_namespace_names_the_cause(core: Any) -> None:
    await call(core.create_namespace, client.V1Namespace(metadata=client.V1ObjectMeta(name="leaving")))
    held = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="held", finalizers=["example.com/hold"]))
    await call(core.create_namespaced_config_map, "leaving", held)
    await call(core.delete_namespace, "leaving")
    code, status = await refusal(
        core.create_namespaced_config_map, "leaving", client.V1ConfigMap(metadata={"name": "new"})
    )
    assert (code, status["reason"]) == (403, "Forbidden")
    assert causes(status) == [("NamespaceTerminating", "metadata.namespace")]
    await call(core.patch_namespaced_config_map, "held", "leaving", {"metadata": {"finalizers": None}})
