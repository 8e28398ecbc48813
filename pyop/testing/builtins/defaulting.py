"""kube-apiserver's defaulting of built-in kinds: the `SetDefaults_*` functions of pkg/apis/{core,apps,batch}/v1.

A cluster fills these fields on every decode (create, update, patch and apply alike), so an object read back from a
cluster is never the object that was sent. An operator that compares its desired object with the stored one must
expect them; here they are, so a test meets the same "desired != stored" difference a cluster shows.

Written from the Kubernetes v1.32 sources (pkg/apis/core/v1/defaults.go, apps/v1/defaults.go, batch/v1/defaults.go and
the generated zz_generated.defaults.go that says which nested types get defaulted), with the feature gates that are on
by default in that release. Registry-side defaults that need server state (a Service's cluster IP, a Job's selector,
which use the object's uid) are in `registry_defaults`, which the registry calls at create.

Every function mutates the object it is given, and writes nothing into a part that is already defaulted (so
`apply_defaults` can leave the parts an update shares with the stored object uncopied).
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
from collections.abc import Callable
from typing import Any, Final

from pyop.api.quantity import QuantityError, parse_quantity
from pyop.testing.builtins.defaulting_cluster import CLUSTER_DEFAULTERS
from pyop.testing.builtins.hpa_versions import default_hpa

TERMINATION_MESSAGE_PATH: Final = "/dev/termination-log"
DEFAULT_SCHEDULER: Final = "default-scheduler"
DEFAULT_GRACE_PERIOD: Final = 30
VOLUME_DEFAULT_MODE: Final = 0o644  # 420: secret, configMap, downwardAPI and projected volumes
CLIENT_IP_AFFINITY_SECONDS: Final = 10800
SERVICE_CIDR: Final = ipaddress.ip_network("10.96.0.0/12")  # kubeadm's default service range
NODE_PORT_RANGE: Final = range(30000, 32768)
MAX_INT32: Final = 2**31 - 1

Obj = dict[str, Any]


# --- core/v1: pods and pod templates ---------------------------------------------------------------


def _image_pull_policy(image: str) -> str:
    """Always for `:latest` or no tag (parsers.ParseImageName defaults the tag to latest), else IfNotPresent.

    A digest (`name@sha256:...`) has no tag, and ParseImageName gives no default tag then."""
    if "@" in image:
        name, _, _ = image.partition("@")
        last = name.rsplit("/", 1)[-1]
        return "Always" if last.partition(":")[2] == "latest" else "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.partition(":")[2] if ":" in last else "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    http_get = probe.get("httpGet")
    if isinstance(http_get, dict):
        http_get.setdefault("path", "/")
        http_get.setdefault("scheme", "HTTP")


def _lifecycle(lifecycle: Any) -> None:
    if not isinstance(lifecycle, dict):
        return
    for hook in ("postStart", "preStop"):
        handler = lifecycle.get(hook)
        if isinstance(handler, dict) and isinstance(handler.get("httpGet"), dict):
            handler["httpGet"].setdefault("path", "/")
            handler["httpGet"].setdefault("scheme", "HTTP")


def _field_ref(selector: Any) -> None:
    if isinstance(selector, dict) and isinstance(selector.get("fieldRef"), dict):
        selector["fieldRef"].setdefault("apiVersion", "v1")


def round_up_resource_list(resources: Any) -> None:
    """SetDefaults_ResourceList: every quantity rounded up to milli scale (`0.0001` cpu -> `1m`)."""
    if not isinstance(resources, dict):
        return
    for key, value in list(resources.items()):
        rounded = _rounded_to_milli(value)
        if rounded is not None and rounded != value:
            resources[key] = rounded


@functools.lru_cache(maxsize=4096)
def _rounded_to_milli(value: Any) -> str | None:
    try:
        return parse_quantity(value).round_up(-3).canonical()
    except (QuantityError, TypeError):
        return None  # the decoder reports malformed quantities


def _container(container: Any) -> None:
    if not isinstance(container, dict):
        return
    if not container.get("imagePullPolicy"):
        container["imagePullPolicy"] = _image_pull_policy(str(container.get("image") or ""))
    container.setdefault("terminationMessagePath", TERMINATION_MESSAGE_PATH)
    container.setdefault("terminationMessagePolicy", "File")
    for port in container.get("ports") or ():
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(container.get(probe))
    _lifecycle(container.get("lifecycle"))
    for env in container.get("env") or ():
        if isinstance(env, dict):
            _field_ref(env.get("valueFrom"))
    resources = container.get("resources")
    if isinstance(resources, dict):
        round_up_resource_list(resources.get("limits"))
        round_up_resource_list(resources.get("requests"))


def _volume(volume: Any) -> None:
    if not isinstance(volume, dict):
        return
    if not any(key != "name" for key in volume):
        volume["emptyDir"] = {}  # SetDefaults_Volume: a volume without a source is an emptyDir
    for source in ("secret", "configMap", "downwardAPI", "projected"):
        if isinstance(volume.get(source), dict):
            volume[source].setdefault("defaultMode", VOLUME_DEFAULT_MODE)
    if isinstance(volume.get("hostPath"), dict):
        volume["hostPath"].setdefault("type", "")
    if isinstance(volume.get("downwardAPI"), dict):
        for item in volume["downwardAPI"].get("items") or ():
            _field_ref(item)
    if isinstance(volume.get("projected"), dict):
        for source in volume["projected"].get("sources") or ():
            if not isinstance(source, dict):
                continue
            if isinstance(source.get("serviceAccountToken"), dict):
                source["serviceAccountToken"].setdefault("expirationSeconds", 3600)
            if isinstance(source.get("downwardAPI"), dict):
                for item in source["downwardAPI"].get("items") or ():
                    _field_ref(item)
    if isinstance(volume.get("iscsi"), dict):
        volume["iscsi"].setdefault("iscsiInterface", "default")
    if isinstance(volume.get("rbd"), dict):
        rbd = volume["rbd"]
        rbd.setdefault("pool", "rbd")
        rbd.setdefault("user", "admin")
        rbd.setdefault("keyring", "/etc/ceph/keyring")
    if isinstance(volume.get("azureDisk"), dict):
        disk = volume["azureDisk"]
        disk.setdefault("cachingMode", "ReadWrite")
        disk.setdefault("fsType", "ext4")
        disk.setdefault("readOnly", False)
        disk.setdefault("kind", "Shared")
    if isinstance(volume.get("ephemeral"), dict):
        template = volume["ephemeral"].get("volumeClaimTemplate")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            _pvc_spec(template["spec"])


def pod_spec(spec: Any) -> None:
    """SetDefaults_PodSpec and the defaults of the types inside a PodSpec (containers, volumes, probes)."""
    if not isinstance(spec, dict):
        return
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    spec.setdefault("securityContext", {})
    spec.setdefault("terminationGracePeriodSeconds", DEFAULT_GRACE_PERIOD)
    # v1's deprecated `serviceAccount`: read when `serviceAccountName` is empty, and always written back as a copy
    # of it (Convert_v1_PodSpec_To_core_PodSpec and back).
    if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER
    for container in itertools.chain(
        spec.get("containers") or (), spec.get("initContainers") or (), spec.get("ephemeralContainers") or ()
    ):
        _container(container)
    for volume in spec.get("volumes") or ():
        _volume(volume)
    if isinstance(spec.get("overhead"), dict):
        round_up_resource_list(spec["overhead"])
    if isinstance(spec.get("resources"), dict):
        round_up_resource_list(spec["resources"].get("limits"))
        round_up_resource_list(spec["resources"].get("requests"))


def pod_template(template: Any) -> None:
    if isinstance(template, dict):
        pod_spec(template.get("spec"))


def pod(obj: Obj) -> None:
    """SetDefaults_Pod (Pods only, not templates): requests from limits, service links, host-network ports."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for container in itertools.chain(spec.get("containers") or (), spec.get("initContainers") or ()):
        if not isinstance(container, dict):
            continue
        resources = container.get("resources")
        if isinstance(resources, dict) and isinstance(resources.get("limits"), dict):
            requests = resources.setdefault("requests", {})
            for key, value in resources["limits"].items():
                requests.setdefault(key, value)
    spec.setdefault("enableServiceLinks", True)
    if spec.get("hostNetwork"):
        for container in itertools.chain(spec.get("containers") or (), spec.get("initContainers") or ()):
            for port in (container or {}).get("ports") or ():
                if isinstance(port, dict) and not port.get("hostPort"):
                    port["hostPort"] = port.get("containerPort")
    pod_spec(spec)


def qos_class(spec: Any) -> str:
    """The pod's QoS class (pkg/apis/core/helper/qos), which the pod strategy stores in status at create."""
    containers = list(itertools.chain((spec or {}).get("containers") or (), (spec or {}).get("initContainers") or ()))
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = True
    for container in containers:
        resources = (container or {}).get("resources") or {}
        container_requests = {k: v for k, v in (resources.get("requests") or {}).items() if k in ("cpu", "memory")}
        container_limits = {k: v for k, v in (resources.get("limits") or {}).items() if k in ("cpu", "memory")}
        requests.update({k: v for k, v in container_requests.items() if _nonzero(v)})
        limits.update({k: v for k, v in container_limits.items() if _nonzero(v)})
        if set(container_limits) != {"cpu", "memory"} or any(
            _quantity_value(container_requests.get(k, v)) != _quantity_value(v) for k, v in container_limits.items()
        ):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _quantity_value(value: Any) -> Any:
    try:
        return parse_quantity(value).value
    except (QuantityError, TypeError):
        return value


def _nonzero(value: Any) -> bool:
    return _quantity_value(value) != 0


# --- core/v1: other kinds -----------------------------------------------------------------------------


def _pvc_spec(spec: Obj) -> None:
    spec.setdefault("volumeMode", "Filesystem")
    resources = spec.get("resources")
    if isinstance(resources, dict):
        round_up_resource_list(resources.get("requests"))
        round_up_resource_list(resources.get("limits"))


def service(obj: Obj) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None" and "sessionAffinityConfig" in spec:
        del spec["sessionAffinityConfig"]
    elif spec["sessionAffinity"] == "ClientIP":
        client_ip = ((spec.get("sessionAffinityConfig") or {}).get("clientIP")) or {}
        if client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": CLIENT_IP_AFFINITY_SECONDS}}
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    for port in spec.get("ports") or ():
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    kind = spec["type"]
    externally_accessible = kind in ("NodePort", "LoadBalancer") or (
        kind == "ClusterIP" and bool(spec.get("externalIPs"))
    )
    if externally_accessible and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and kind in ("NodePort", "LoadBalancer", "ClusterIP"):
        spec["internalTrafficPolicy"] = "Cluster"
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True


def secret(obj: Obj) -> None:
    if not obj.get("type"):
        obj["type"] = "Opaque"


def namespace(obj: Obj) -> None:
    """SetDefaults_Namespace: the `kubernetes.io/metadata.name` label (only once the name is known)."""
    name = obj["metadata"].get("name")
    labels = obj["metadata"].get("labels") or {}
    if name and labels.get("kubernetes.io/metadata.name") != name:
        obj["metadata"]["labels"] = {**labels, "kubernetes.io/metadata.name": name}


def endpoints(obj: Obj) -> None:
    for subset in obj.get("subsets") or ():
        for port in (subset or {}).get("ports") or ():
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"


def persistent_volume_claim(obj: Obj) -> None:
    if isinstance(obj.get("spec"), dict):
        _pvc_spec(obj["spec"])


def persistent_volume(obj: Obj) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        round_up_resource_list(spec.get("capacity"))


def replication_controller(obj: Obj) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        if not obj["metadata"].get("labels"):
            obj["metadata"]["labels"] = dict(labels)
    spec.setdefault("replicas", 1)
    pod_template(spec.get("template"))


def limit_range(obj: Obj) -> None:
    for item in (obj.get("spec") or {}).get("limits") or ():
        if not isinstance(item, dict):
            continue
        for key in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            round_up_resource_list(item.get(key))
        if item.get("type") != "Container":
            continue
        default = item.setdefault("default", {})
        default_request = item.setdefault("defaultRequest", {})
        for key, value in (item.get("max") or {}).items():
            default.setdefault(key, value)
        for key, value in default.items():
            default_request.setdefault(key, value)
        for key, value in (item.get("min") or {}).items():
            default_request.setdefault(key, value)


def resource_quota(obj: Obj) -> None:
    round_up_resource_list((obj.get("spec") or {}).get("hard"))


# --- apps/v1 ------------------------------------------------------------------------------------------


def deployment(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            rolling = strategy["rollingUpdate"] = {}
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    pod_template(spec.get("template"))


def daemon_set(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            rolling = strategy["rollingUpdate"] = {}
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    pod_template(spec.get("template"))


def stateful_set(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = spec.setdefault("updateStrategy", {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        if strategy.get("rollingUpdate") is None:
            strategy["rollingUpdate"] = {}
    rolling = strategy.get("rollingUpdate")
    if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
        rolling.setdefault("partition", 0)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})  # StatefulSetAutoDeletePVC: on
    if not retention.get("whenDeleted"):
        retention["whenDeleted"] = "Retain"
    if not retention.get("whenScaled"):
        retention["whenScaled"] = "Retain"
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    pod_template(spec.get("template"))
    for claim in spec.get("volumeClaimTemplates") or ():
        if isinstance(claim, dict):
            if isinstance(claim.get("spec"), dict):
                _pvc_spec(claim["spec"])
            status = claim.setdefault("status", {})
            if isinstance(status, dict) and not status.get("phase"):
                status["phase"] = "Pending"  # SetDefaults_PersistentVolumeClaim


def replica_set(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    pod_template(spec.get("template"))


# --- batch/v1 -----------------------------------------------------------------------------------------


def job_spec(spec: Obj) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None:
        per_index = spec.get("backoffLimitPerIndex") is not None and spec.get("completionMode") == "Indexed"
        spec["backoffLimit"] = MAX_INT32 if per_index else 6
    if not spec.get("completionMode"):
        spec["completionMode"] = "NonIndexed"
    spec.setdefault("suspend", False)
    if spec.get("podReplacementPolicy") is None:  # JobPodReplacementPolicy: on
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    for rule in (spec.get("podFailurePolicy") or {}).get("rules") or ():
        for pattern in (rule or {}).get("onPodConditions") or ():
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"
    spec.setdefault("manualSelector", False)
    pod_template(spec.get("template"))


def job(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    job_spec(spec)
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if labels is not None and not obj["metadata"].get("labels"):
        obj["metadata"]["labels"] = dict(labels)


def cron_job(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict) and isinstance(job_template.get("spec"), dict):
        # The generated defaulter reaches the template's PodSpec; SetDefaults_Job itself runs on Jobs only.
        pod_template(job_template["spec"].get("template"))


def pod_template_kind(obj: Obj) -> None:
    pod_template(obj.get("template"))


def api_service(obj: Obj) -> None:
    """kube-aggregator's SetDefaults_ServiceReference: a service's port is 443 unless given."""
    service = (obj.get("spec") or {}).get("service")
    if isinstance(service, dict):
        service.setdefault("port", 443)


DEFAULTERS: Final[dict[tuple[str, str], Callable[[Obj], None]]] = {
    ("", "Pod"): pod,
    ("", "PodTemplate"): pod_template_kind,
    ("", "Service"): service,
    ("", "Secret"): secret,
    ("", "Namespace"): namespace,
    ("", "Endpoints"): endpoints,
    ("", "PersistentVolumeClaim"): persistent_volume_claim,
    ("", "PersistentVolume"): persistent_volume,
    ("", "ReplicationController"): replication_controller,
    ("", "LimitRange"): limit_range,
    ("", "ResourceQuota"): resource_quota,
    ("apps", "Deployment"): deployment,
    ("apps", "DaemonSet"): daemon_set,
    ("apps", "StatefulSet"): stateful_set,
    ("apps", "ReplicaSet"): replica_set,
    ("batch", "Job"): job,
    ("batch", "CronJob"): cron_job,
    ("apiregistration.k8s.io", "APIService"): api_service,
    ("autoscaling", "HorizontalPodAutoscaler"): default_hpa,
    **CLUSTER_DEFAULTERS,
}
"""(group, kind) -> defaulter. ConfigMap's `SetDefaults_ConfigMap` (data = {}) is not here: an empty map is omitted
when the object is encoded, so it is invisible to clients."""


def apply_defaults(group: str, kind: str, obj: Obj, old: Obj | None = None) -> Obj:
    """`obj` with its kind's defaults, or `obj` itself for kinds without defaulters. `obj` is left alone: the result
    is a copy of every part of it that is not shared with `old` (the stored object an update started from, already
    defaulted, where the defaulters write nothing); shared parts stay shared."""
    defaulter = DEFAULTERS.get((group, kind))
    if defaulter is None:
        return obj
    copy = _unshared_copy(obj, old)
    defaulter(copy)
    return copy


def _unshared_copy(value: Any, old: Any) -> Any:
    if value is old:
        return value
    if isinstance(value, dict):
        old_map = old if isinstance(old, dict) else None
        return {key: _unshared_copy(item, old_map.get(key) if old_map else None) for key, item in value.items()}
    if isinstance(value, list):
        old_list = old if isinstance(old, list) else None
        return [
            _unshared_copy(item, old_list[index] if old_list and index < len(old_list) else None)
            for index, item in enumerate(value)
        ]
    return value


# --- registry defaults at create (server state: allocated IPs and ports, the object's uid) ------------------


def allocate_service(spec: Obj, used_ips: set[str], used_ports: set[int]) -> None:
    """The service registry's allocation: cluster IP(s), IP families, node ports."""
    kind = spec.get("type", "ClusterIP")
    if kind == "ExternalName":
        return
    headless = spec.get("clusterIP") == "None"
    if not headless and not spec.get("clusterIP"):
        spec["clusterIP"] = _free_ip(used_ips)
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    if headless and not spec.get("selector") and not spec.get("ipFamilyPolicy"):
        # Headless services without a selector are dual-stack where the cluster can be (any family may be used).
        spec["ipFamilyPolicy"] = "RequireDualStack"
        spec.setdefault("ipFamilies", ["IPv4", "IPv6"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("ipFamilies", ["IPv4"])
    if kind in ("NodePort", "LoadBalancer") and spec.get("allocateLoadBalancerNodePorts", True) is not False:
        for port in spec.get("ports") or ():
            if isinstance(port, dict) and not port.get("nodePort"):
                port["nodePort"] = _free_port(used_ports)
    if kind == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local" and not spec.get("healthCheckNodePort"):
        spec["healthCheckNodePort"] = _free_port(used_ports)


def _free_ip(used: set[str]) -> str:
    for host in itertools.islice(SERVICE_CIDR.hosts(), 10, None):  # .1 is the kubernetes service; keep a few back
        text = str(host)
        if text not in used:
            used.add(text)
            return text
    raise RuntimeError("the test server's service IP range is exhausted")


def _free_port(used: set[int]) -> int:
    for port in NODE_PORT_RANGE:
        if port not in used:
            used.add(port)
            return port
    raise RuntimeError("the test server's node port range is exhausted")


def generate_job_selector(obj: Obj) -> None:
    """The job strategy's generateSelector (unless `manualSelector: true`): the uid selector and template labels."""
    spec = obj.setdefault("spec", {})
    if spec.get("manualSelector"):
        return
    metadata = obj["metadata"]
    template = spec.setdefault("template", {})
    template_meta = template.setdefault("metadata", {})
    labels = template_meta.setdefault("labels", {})
    uid, name = metadata.get("uid", ""), metadata.get("name", "")
    for key, value in (
        ("batch.kubernetes.io/controller-uid", uid),
        ("batch.kubernetes.io/job-name", name),
        ("controller-uid", uid),
        ("job-name", name),
    ):
        labels.setdefault(key, value)
    selector = spec.get("selector") or {}
    match_labels = dict(selector.get("matchLabels") or {})
    match_labels.setdefault("batch.kubernetes.io/controller-uid", uid)
    spec["selector"] = {**selector, "matchLabels": match_labels}
