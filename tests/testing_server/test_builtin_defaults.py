"""API defaulting of built-in kinds: a minimal object reads back with exactly the fields a cluster adds.

The expected objects are written from kube-apiserver v1.32's defaulters (pkg/apis/core/v1/defaults.go,
apps/v1/defaults.go, batch/v1/defaults.go), its registry strategies (job selector generation, service IP allocation,
pod QoS class), not from this server's output.
"""

from __future__ import annotations

from typing import Any

import pytest

from pyop.apiserver.registry.operations import WriteOptions
from pyop.testing import TestAPIServer
from pyop.testing.admission.service_account import token_volume
from testing_server.helpers import DEPLOY, Api, admitted_pod_spec, token_mount


@pytest.fixture
def kubernetes_version() -> str:
    """Kubernetes 1.32: the expectations here come from kube-apiserver v1.32's source, and some are
    version-specific (embedded templates' `creationTimestamp: null` until 1.33, Pods' generation from 1.33)."""
    return "1.32"

NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
BATCH = "/apis/batch/v1/namespaces/default"

DEFAULTED_POD_SPEC_FIELDS = {
    "dnsPolicy": "ClusterFirst",
    "restartPolicy": "Always",
    "securityContext": {},
    "terminationGracePeriodSeconds": 30,
    "schedulerName": "default-scheduler",
}


def defaulted_container(name: str, image: str, pull: str) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "resources": {},  # a value struct: Go's encoder writes it even when empty
        "imagePullPolicy": pull,
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


def template(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels or {"app": "x"}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}], **spec},
    }


def expected_template(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    # Before v1.33 an embedded ObjectMeta encodes its zero creationTimestamp as null (kubernetes#130989 dropped it).
    return {
        "metadata": {"labels": labels or {"app": "x"}, "creationTimestamp": None},
        "spec": {
            "containers": [defaulted_container("main", "nginx:1.27", "IfNotPresent")],
            **DEFAULTED_POD_SPEC_FIELDS,
            **spec,
        },
    }


SELECTOR = {"matchLabels": {"app": "x"}}


async def test_minimal_deployment_gets_the_workload_and_pod_defaults(api: Api) -> None:
    body = {"metadata": {"name": "d"}, "spec": {"selector": SELECTOR, "template": template()}}
    created = await api.create_ok(DEPLOY, body)
    assert created["spec"] == {
        "replicas": 1,
        "selector": SELECTOR,
        "template": expected_template(),
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
    }
    assert created["status"] == {}
    status, read = await api.get(f"{DEPLOY}/d")
    assert status == 200 and read["spec"] == created["spec"]


async def test_recreate_strategy_gets_no_rolling_update_parameters(api: Api) -> None:
    spec = {"selector": SELECTOR, "template": template(), "strategy": {"type": "Recreate"}}
    created = await api.create_ok(DEPLOY, {"metadata": {"name": "d"}, "spec": spec})
    assert created["spec"]["strategy"] == {"type": "Recreate"}


async def test_an_update_that_omits_defaulted_fields_gets_them_again(api: Api) -> None:
    """Defaulting happens on decode: a PUT of the operator's desired object is stored defaulted, so it is a no-op."""
    desired = {"metadata": {"name": "d"}, "spec": {"selector": SELECTOR, "template": template()}}
    created = await api.create_ok(DEPLOY, desired)
    status, updated = await api.put(f"{DEPLOY}/d", desired)
    assert status == 200
    assert updated["spec"] == created["spec"]
    assert updated["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]  # nothing changed
    assert updated["metadata"]["generation"] == 1


async def test_merge_patch_adding_a_container_defaults_it(api: Api) -> None:
    body = {"metadata": {"name": "d"}, "spec": {"selector": SELECTOR, "template": template()}}
    await api.create_ok(DEPLOY, body)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}}}
    status, patched = await api.patch(f"{DEPLOY}/d", patch, "application/merge-patch+json")
    assert status == 200
    assert patched["spec"]["template"]["spec"]["containers"] == [defaulted_container("main", "busybox", "Always")]


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("registry.example:5000/team/app", "Always"),
        ("registry.example:5000/team/app:v2", "IfNotPresent"),
        ("app@sha256:" + "a" * 64, "IfNotPresent"),
    ],
)
async def test_image_pull_policy_follows_the_tag(api: Api, image: str, policy: str) -> None:
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": image}]}}
    created = await api.create_ok(f"{NS}/pods", body)
    assert created["spec"]["containers"][0]["imagePullPolicy"] == policy


async def test_minimal_pod_gets_pod_only_defaults_and_a_qos_class(api: Api) -> None:
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}
    created = await api.create_ok(f"{NS}/pods", body)
    token, admitted = admitted_pod_spec(created["spec"])
    container = {**defaulted_container("c", "nginx:1.27", "IfNotPresent"), "volumeMounts": [token_mount(token)]}
    assert created["spec"] == {
        "containers": [container],
        **DEFAULTED_POD_SPEC_FIELDS,
        "enableServiceLinks": True,
        "volumes": [token_volume(token)],
        **admitted,
    }
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert "generation" not in created["metadata"]  # v1.32: pods have no generation yet


async def test_pod_requests_default_to_limits_and_guaranteed_qos(api: Api) -> None:
    resources = {"limits": {"cpu": "500m", "memory": "128Mi"}}
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x:1", "resources": resources}]}}
    created = await api.create_ok(f"{NS}/pods", body)
    assert created["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "128Mi"},
        "requests": {"cpu": "500m", "memory": "128Mi"},
    }
    assert created["status"]["qosClass"] == "Guaranteed"


async def test_probes_ports_env_and_volumes_are_defaulted(api: Api) -> None:
    container = {
        "name": "c",
        "image": "x:1",
        "ports": [{"containerPort": 8080}],
        "livenessProbe": {"httpGet": {"port": 8080}},
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
    }
    volumes = [{"name": "scratch"}, {"name": "conf", "configMap": {"name": "conf"}}, {"name": "s", "secret": {}}]
    body = {"metadata": {"name": "p"}, "spec": {"containers": [container], "volumes": volumes}}
    created = await api.create_ok(f"{NS}/pods", body)
    got = created["spec"]["containers"][0]
    assert got["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert got["livenessProbe"] == {
        "httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert got["env"][0]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName", "apiVersion": "v1"}}
    token, _ = admitted_pod_spec(created["spec"])
    assert created["spec"]["volumes"] == [
        {"name": "scratch", "emptyDir": {}},
        {"name": "conf", "configMap": {"name": "conf", "defaultMode": 420}},
        {"name": "s", "secret": {"defaultMode": 420}},
        token_volume(token),  # the ServiceAccount admission plugin's
    ]


async def test_cluster_ip_service_gets_affinity_type_ports_and_an_allocated_ip(api: Api) -> None:
    body = {"metadata": {"name": "s"}, "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]}}
    created = await api.create_ok(f"{NS}/services", body)
    spec = created["spec"]
    cluster_ip = spec.pop("clusterIP")
    assert cluster_ip.startswith("10.")
    assert spec == {
        "selector": {"app": "x"},
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
        "sessionAffinity": "None",
        "type": "ClusterIP",
        "internalTrafficPolicy": "Cluster",
        "clusterIPs": [cluster_ip],
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
    }
    assert created["status"] == {"loadBalancer": {}}
    second = await api.create_ok(f"{NS}/services", {"metadata": {"name": "t"}, "spec": {"ports": [{"port": 80}]}})
    assert second["spec"]["clusterIP"] != cluster_ip


async def test_load_balancer_service_gets_node_ports_and_external_policy(api: Api) -> None:
    body = {
        "metadata": {"name": "lb"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 443, "targetPort": "https"}]},
    }
    spec = (await api.create_ok(f"{NS}/services", body))["spec"]
    node_port = spec["ports"][0].pop("nodePort")
    assert 30000 <= node_port <= 32767
    assert spec["ports"] == [{"port": 443, "targetPort": "https", "protocol": "TCP"}]
    assert spec["externalTrafficPolicy"] == "Cluster"
    assert spec["allocateLoadBalancerNodePorts"] is True
    assert spec["internalTrafficPolicy"] == "Cluster"


async def test_client_ip_affinity_gets_its_timeout_and_headless_services_no_ip(api: Api) -> None:
    body = {"metadata": {"name": "a"}, "spec": {"sessionAffinity": "ClientIP", "ports": [{"port": 80}]}}
    spec = (await api.create_ok(f"{NS}/services", body))["spec"]
    assert spec["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    headless = {"metadata": {"name": "h"}, "spec": {"clusterIP": "None", "selector": {"app": "x"}}}
    spec = (await api.create_ok(f"{NS}/services", headless))["spec"]
    assert spec["clusterIP"] == "None" and spec["clusterIPs"] == ["None"]
    assert spec["ipFamilyPolicy"] == "SingleStack"


async def test_minimal_job_gets_batch_defaults_and_a_generated_selector(api: Api) -> None:
    body = {
        "metadata": {"name": "j"},
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}
        },
    }
    created = await api.create_ok(f"{BATCH}/jobs", body)
    uid = created["metadata"]["uid"]
    generated = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "j",
        "controller-uid": uid,
        "job-name": "j",
    }
    assert created["spec"] == {
        "completions": 1,
        "parallelism": 1,
        "backoffLimit": 6,
        "completionMode": "NonIndexed",
        "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed",
        "manualSelector": False,
        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}},
        "template": {
            "metadata": {"labels": generated, "creationTimestamp": None},
            "spec": {
                "containers": [defaulted_container("c", "busybox:1.36", "IfNotPresent")],
                **DEFAULTED_POD_SPEC_FIELDS,
                "restartPolicy": "Never",
            },
        },
    }
    assert created["metadata"]["labels"] == generated
    assert created["status"] == {}


async def test_job_with_parallelism_only_and_a_manual_selector(api: Api) -> None:
    spec = {
        "parallelism": 3,
        "manualSelector": True,
        "selector": SELECTOR,
        "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
        "template": template(restartPolicy="Never"),
    }
    created = (await api.create_ok(f"{BATCH}/jobs", {"metadata": {"name": "j"}, "spec": spec}))["spec"]
    assert "completions" not in created  # only defaulted when parallelism is unset too
    assert created["selector"] == SELECTOR and created["template"]["metadata"]["labels"] == {"app": "x"}
    assert created["podReplacementPolicy"] == "Failed"  # a pod failure policy changes the default
    assert created["podFailurePolicy"]["rules"][0]["onPodConditions"] == [
        {"type": "DisruptionTarget", "status": "True"}
    ]


async def test_minimal_cronjob_gets_its_defaults_and_its_pod_template_too(api: Api) -> None:
    job_template = {"spec": {"template": template(restartPolicy="OnFailure")}}
    body = {"metadata": {"name": "c"}, "spec": {"schedule": "*/5 * * * *", "jobTemplate": job_template}}
    created = await api.create_ok(f"{BATCH}/cronjobs", body)
    assert created["spec"] == {
        "schedule": "*/5 * * * *",
        "concurrencyPolicy": "Allow",
        "suspend": False,
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1,
        "jobTemplate": {
            "metadata": {"creationTimestamp": None},
            "spec": {"template": expected_template(restartPolicy="OnFailure")},
        },
    }


async def test_minimal_statefulset_daemonset_and_replicaset(api: Api) -> None:
    sts = {"metadata": {"name": "s"}, "spec": {"selector": SELECTOR, "serviceName": "s", "template": template()}}
    assert (await api.create_ok(f"{APPS}/statefulsets", sts))["spec"] == {
        "selector": SELECTOR,
        "serviceName": "s",
        "template": expected_template(),
        "podManagementPolicy": "OrderedReady",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
        "replicas": 1,
        "revisionHistoryLimit": 10,
    }
    ds = {"metadata": {"name": "d"}, "spec": {"selector": SELECTOR, "template": template()}}
    assert (await api.create_ok(f"{APPS}/daemonsets", ds))["spec"] == {
        "selector": SELECTOR,
        "template": expected_template(),
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
        "revisionHistoryLimit": 10,
    }
    rs = {"metadata": {"name": "r"}, "spec": {"selector": SELECTOR, "template": template()}}
    assert (await api.create_ok(f"{APPS}/replicasets", rs))["spec"] == {
        "selector": SELECTOR,
        "template": expected_template(),
        "replicas": 1,
    }


async def test_statefulset_on_delete_strategy_keeps_no_partition(api: Api) -> None:
    spec = {"selector": SELECTOR, "template": template(), "updateStrategy": {"type": "OnDelete"}}
    created = await api.create_ok(f"{APPS}/statefulsets", {"metadata": {"name": "s"}, "spec": spec})
    assert created["spec"]["updateStrategy"] == {"type": "OnDelete"}


async def test_core_kinds_secret_namespace_pvc_endpoints(api: Api) -> None:
    secret = await api.create_ok(f"{NS}/secrets", {"metadata": {"name": "s"}, "stringData": {"k": "v"}})
    assert secret["type"] == "Opaque" and secret["data"] == {"k": "dg=="}
    namespace = await api.create_ok("/api/v1/namespaces", {"metadata": {"generateName": "team-"}})
    assert namespace["metadata"]["labels"] == {"kubernetes.io/metadata.name": namespace["metadata"]["name"]}
    claim = {
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1024Mi"}}},
    }
    created = await api.create_ok(f"{NS}/persistentvolumeclaims", claim)
    assert created["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
        "volumeMode": "Filesystem",
    }
    assert created["status"] == {"phase": "Pending"}
    endpoints = {"metadata": {"name": "e"}, "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}
    created = await api.create_ok(f"{NS}/endpoints", endpoints)
    assert created["subsets"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]


async def test_configmaps_are_stored_as_sent_and_empty_maps_are_omitted(api: Api) -> None:
    body = {"metadata": {"name": "c", "labels": {}, "annotations": {}}, "data": {"k": "v"}}
    created = await api.create_ok(f"{NS}/configmaps", body)
    assert "labels" not in created["metadata"] and "annotations" not in created["metadata"]
    assert created["data"] == {"k": "v"}
    empty = await api.create_ok(f"{NS}/configmaps", {"metadata": {"name": "e"}, "data": {}})
    assert "data" not in empty


async def test_from_kubernetes_1_33_embedded_metadata_has_no_null_creation_timestamp() -> None:
    async with TestAPIServer(kubernetes_version="1.34") as newer:
        deployments = newer.resources.lookup("apps", "v1", "deployments")
        body = {"metadata": {"name": "d"}, "spec": {"selector": SELECTOR, "template": template()}}
        created = newer.operations.create(deployments, "default", body, WriteOptions(field_manager="t"))
        assert created["spec"]["template"]["metadata"] == {"labels": {"app": "x"}}
        assert newer.kubernetes_version == "1.34"
