"""kube-apiserver's compiled-in Pod admission (issue 12 item 9): ServiceAccount, DefaultTolerationSeconds and
Priority, and kube-controller-manager's `default` ServiceAccount in every namespace.

Expected values are written from the plugins' documented behaviour (plugin/pkg/admission/serviceaccount,
defaulttolerationseconds, priority) and what `kubectl get pod -o yaml` shows on a cluster, not from this server.
"""

from __future__ import annotations

from typing import Any

from pyop.testing import TestAPIServer
from testing_server.helpers import POD_TOLERATIONS as KUBE_TOLERATIONS
from testing_server.helpers import TOKEN_MOUNT_PATH as TOKEN_PATH
from testing_server.helpers import Api, api_for, eventually

PODS = "/api/v1/namespaces/default/pods"


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}], **spec},
    }


async def test_a_pod_runs_as_default_with_the_api_access_volume_mounted_in_every_container(api: Api) -> None:
    body = pod("web", initContainers=[{"name": "init", "image": "busybox:1.36"}])
    created = await api.create_ok(PODS, body)
    spec = created["spec"]
    assert spec["serviceAccountName"] == "default" and spec["serviceAccount"] == "default"
    [volume] = spec["volumes"]
    assert volume["name"].startswith("kube-api-access-") and len(volume["name"]) == len("kube-api-access-") + 5
    assert volume["projected"] == {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {
                "downwardAPI": {
                    "items": [
                        {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
                    ]
                }
            },
        ],
    }
    mount = {"name": volume["name"], "readOnly": True, "mountPath": TOKEN_PATH}
    assert spec["containers"][0]["volumeMounts"] == [mount]
    assert spec["initContainers"][0]["volumeMounts"] == [mount]
    status, stored = await api.get(f"{PODS}/web")
    assert status == 200 and stored["spec"]["volumes"] == spec["volumes"]


async def test_no_token_volume_when_the_pod_or_its_account_opts_out(api: Api) -> None:
    created = await api.create_ok(PODS, pod("opted-out", automountServiceAccountToken=False))
    assert "volumes" not in created["spec"] and "volumeMounts" not in created["spec"]["containers"][0]

    account = {"metadata": {"name": "quiet"}, "automountServiceAccountToken": False}
    await api.create_ok("/api/v1/namespaces/default/serviceaccounts", account)
    created = await api.create_ok(PODS, pod("quiet-pod", serviceAccountName="quiet"))
    assert "volumes" not in created["spec"]
    # The pod's own choice wins over its account's.
    created = await api.create_ok(PODS, pod("loud-pod", serviceAccountName="quiet", automountServiceAccountToken=True))
    assert [v["name"][:16] for v in created["spec"]["volumes"]] == ["kube-api-access-"]


async def test_a_container_with_its_own_mount_at_the_token_path_keeps_it(api: Api) -> None:
    own = {"name": "mine", "mountPath": TOKEN_PATH}
    body = pod("own-mount", volumes=[{"name": "mine", "emptyDir": {}}])
    body["spec"]["containers"][0]["volumeMounts"] = [own]
    created = await api.create_ok(PODS, body)
    assert created["spec"]["containers"][0]["volumeMounts"] == [own]
    assert [v["name"] for v in created["spec"]["volumes"]] == ["mine"]


async def test_a_missing_service_account_is_forbidden(api: Api) -> None:
    status, answer = await api.post(PODS, pod("lonely", serviceAccountName="nobody"))
    assert status == 403, answer
    assert answer["reason"] == "Forbidden"
    assert answer["message"] == (
        'pods "lonely" is forbidden: error looking up service account default/nobody: serviceaccount "nobody" not found'
    )
    assert answer["details"] == {"name": "lonely", "kind": "pods"}
    status, _ = await api.get(f"{PODS}/lonely")
    assert status == 404


async def test_a_generated_name_pod_is_refused_without_a_name(api: Api) -> None:
    body = pod("")
    body["metadata"] = {"generateName": "job-"}
    body["spec"]["serviceAccountName"] = "nobody"
    status, answer = await api.post(PODS, body)
    assert status == 403
    assert answer["message"].startswith("pods is forbidden: error looking up service account default/nobody")


async def test_every_namespace_gets_a_default_service_account_at_once_and_again_after_deletion(api: Api) -> None:
    await api.create_ok("/api/v1/namespaces", {"metadata": {"name": "team-a"}})
    status, account = await api.get("/api/v1/namespaces/team-a/serviceaccounts/default")
    assert status == 200, account
    created = await api.create_ok("/api/v1/namespaces/team-a/pods", pod("first"))
    assert created["spec"]["serviceAccountName"] == "default"

    status, _ = await api.delete("/api/v1/namespaces/team-a/serviceaccounts/default")
    assert status == 200
    status, again = await api.get("/api/v1/namespaces/team-a/serviceaccounts/default")
    assert status == 200 and again["metadata"]["uid"] != account["metadata"]["uid"]


async def test_the_initial_namespaces_have_their_default_accounts(server: TestAPIServer) -> None:
    for namespace in ("default", "kube-system", "kube-public", "kube-node-lease"):
        assert server.store.get("serviceaccounts", namespace, "default") is not None, namespace


async def test_image_pull_secrets_come_from_the_account_when_the_pod_has_none(api: Api) -> None:
    account = {"metadata": {"name": "puller"}, "imagePullSecrets": [{"name": "registry"}]}
    await api.create_ok("/api/v1/namespaces/default/serviceaccounts", account)
    created = await api.create_ok(PODS, pod("pulls", serviceAccountName="puller"))
    assert created["spec"]["imagePullSecrets"] == [{"name": "registry"}]
    own = await api.create_ok(PODS, pod("own", serviceAccountName="puller", imagePullSecrets=[{"name": "mine"}]))
    assert own["spec"]["imagePullSecrets"] == [{"name": "mine"}]


async def test_pods_tolerate_not_ready_and_unreachable_nodes_for_300_seconds(api: Api) -> None:
    created = await api.create_ok(PODS, pod("tolerant"))
    assert created["spec"]["tolerations"] == KUBE_TOLERATIONS

    gpu = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}
    created = await api.create_ok(PODS, pod("gpu", tolerations=[gpu]))
    assert created["spec"]["tolerations"] == [gpu, *KUBE_TOLERATIONS]

    # A toleration of every NoExecute taint (no key) already covers both.
    everything = {"operator": "Exists", "effect": "NoExecute"}
    created = await api.create_ok(PODS, pod("tolerates-all", tolerations=[everything]))
    assert created["spec"]["tolerations"] == [everything]

    own = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 6}
    created = await api.create_ok(PODS, pod("own-seconds", tolerations=[own]))
    assert created["spec"]["tolerations"] == [own, KUBE_TOLERATIONS[0]]


async def test_priority_comes_from_the_priority_class(api: Api) -> None:
    created = await api.create_ok(PODS, pod("plain"))
    assert created["spec"]["priority"] == 0 and created["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    assert "priorityClassName" not in created["spec"]

    created = await api.create_ok(PODS, pod("critical", priorityClassName="system-cluster-critical"))
    assert created["spec"]["priority"] == 2000000000

    classes = "/apis/scheduling.k8s.io/v1/priorityclasses"
    await api.create_ok(classes, {"metadata": {"name": "batch-low"}, "value": -5, "preemptionPolicy": "Never"})
    created = await api.create_ok(PODS, pod("low", priorityClassName="batch-low"))
    assert (created["spec"]["priority"], created["spec"]["preemptionPolicy"]) == (-5, "Never")

    await api.create_ok(classes, {"metadata": {"name": "everyone"}, "value": 7, "globalDefault": True})
    created = await api.create_ok(PODS, pod("defaulted"))
    assert (created["spec"]["priorityClassName"], created["spec"]["priority"]) == ("everyone", 7)


async def test_priority_refusals(api: Api) -> None:
    status, answer = await api.post(PODS, pod("no-class", priorityClassName="gold"))
    assert status == 403
    assert answer["message"] == 'pods "no-class" is forbidden: no PriorityClass with name gold was found'
    status, answer = await api.post(PODS, pod("own-value", priority=10))
    assert status == 403
    assert answer["message"] == (
        'pods "own-value" is forbidden: the integer value of priority (10) must not be provided in pod spec; '
        "priority admission controller computed 0 from the given PriorityClass name"
    )


async def test_pod_templates_are_not_admitted_as_pods(api: Api) -> None:
    deployment = {
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}], "serviceAccountName": "nobody"},
            },
        },
    }
    created = await api.create_ok("/apis/apps/v1/namespaces/default/deployments", deployment)
    template = created["spec"]["template"]["spec"]
    assert "tolerations" not in template and "volumes" not in template and "priority" not in template
    assert template["serviceAccount"] == "nobody"  # v1's deprecated copy, written back for templates too


async def test_the_deprecated_service_account_field_names_the_account(api: Api) -> None:
    account = {"metadata": {"name": "legacy"}}
    await api.create_ok("/api/v1/namespaces/default/serviceaccounts", account)
    created = await api.create_ok(PODS, pod("legacy-pod", serviceAccount="legacy"))
    assert created["spec"]["serviceAccountName"] == "legacy" and created["spec"]["serviceAccount"] == "legacy"


async def test_dry_run_is_admitted_but_not_stored(api: Api) -> None:
    created = await api.create_ok(PODS, pod("dry"), dryRun="All")
    assert created["spec"]["tolerations"] == KUBE_TOLERATIONS
    status, _ = await api.get(f"{PODS}/dry")
    assert status == 404


async def test_namespace_deletion_is_not_undone_by_the_account_controller(server: TestAPIServer, api: Api) -> None:
    await api.create_ok("/api/v1/namespaces", {"metadata": {"name": "gone"}})
    status, _ = await api.delete("/api/v1/namespaces/gone")
    assert status == 200

    async def namespace_gone() -> bool:
        status, _ = await api.get("/api/v1/namespaces/gone")
        return status == 404

    await eventually(namespace_gone, "namespace gone deleted")
    assert server.store.get("serviceaccounts", "gone", "default") is None


async def test_every_namespace_has_the_root_ca_config_map_the_token_volume_projects() -> None:
    async with TestAPIServer() as server, api_for(server) as api:
        await _root_ca_published(server, api)


async def _root_ca_published(server: TestAPIServer, api: Api) -> None:
    assert server.certificate is not None
    ca = server.certificate.certificate_pem.decode("ascii")
    status, config_map = await api.get("/api/v1/namespaces/default/configmaps/kube-root-ca.crt")
    assert status == 200 and config_map["data"] == {"ca.crt": ca}
    await api.create_ok("/api/v1/namespaces", {"metadata": {"name": "team-b"}})
    status, config_map = await api.get("/api/v1/namespaces/team-b/configmaps/kube-root-ca.crt")
    assert status == 200 and config_map["data"] == {"ca.crt": ca}

    # Deleted or changed, the publisher puts it back.
    status, _ = await api.delete("/api/v1/namespaces/team-b/configmaps/kube-root-ca.crt")
    assert status == 200
    status, config_map = await api.get("/api/v1/namespaces/team-b/configmaps/kube-root-ca.crt")
    assert status == 200 and config_map["data"] == {"ca.crt": ca}
    changed = {**config_map, "data": {"ca.crt": "not a CA"}}
    status, _ = await api.put("/api/v1/namespaces/team-b/configmaps/kube-root-ca.crt", changed)
    assert status == 200
    status, config_map = await api.get("/api/v1/namespaces/team-b/configmaps/kube-root-ca.crt")
    assert config_map["data"] == {"ca.crt": ca}


async def test_a_plain_http_server_has_no_ca_to_publish() -> None:
    async with TestAPIServer(tls=False) as plain:
        assert plain.store.get("configmaps", "default", "kube-root-ca.crt") is None
        assert plain.store.get("serviceaccounts", "default", "default") is not None
