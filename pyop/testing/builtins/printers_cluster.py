"""kube-apiserver's printer columns of the cluster-facing built-in kinds: autoscaling, policy, networking, discovery,
storage, scheduling, node, admission registration, nodes and volumes, quotas and controller revisions.

The workload, core and RBAC kinds are in `printers.py`; this module holds the rest that `pkg/printers/internalversion`
prints, so `kubectl get hpa,pdb,ingress,pvc,nodes,...` shows a cluster's columns rather than the default Name and
Created At. Each row function is the cells of the kube printer of the same name; lists that kube shortens ("+ N
more...") are shortened the same way. Values are read from the stored object, whose quantities the server has
already made canonical, so a Quantity's `String()` is the stored string.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pyop.apiserver.endpoints.printing import AGE, NAME, Column, Row, age, human_duration
from pyop.testing.builtins.printers import _get, _int_column, _selector, _str_column

STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
_NODE_ROLE_PREFIX = "node-role.kubernetes.io/"
_NODE_ROLE_LABEL = "kubernetes.io/role"


def _boolean(name: str, doc: str) -> Column:
    return (name, "boolean", "", doc, 0)


def _with_more(items: list[str], count: int, maximum: int, empty: str) -> str:
    """`listWithMoreString`: the first ``maximum`` items, then "+ N more..." for the rest."""
    text = ",".join(items[:maximum])
    if count > maximum:
        return f"{text} + {count - maximum} more..."
    return text or empty


# --- autoscaling ---------------------------------------------------------------------------------------------------


def _metric_current(statuses: list[Any], index: int, source: str, field: str) -> Any:
    status = statuses[index] if index < len(statuses) and isinstance(statuses[index], Mapping) else {}
    return _get(status, source, "current", field)


def _hpa_metric(spec: Mapping[str, Any], statuses: list[Any], index: int) -> str:
    kind = spec.get("type")
    if kind in ("External", "Object"):
        source = "external" if kind == "External" else "object"
        target = _get(spec, source, "target") or {}
        if target.get("averageValue") is not None:
            current = _metric_current(statuses, index, source, "averageValue") or "<unknown>"
            return f"{current}/{target['averageValue']} (avg)"
        current = _metric_current(statuses, index, source, "value") or "<unknown>"
        return f"{current}/{target.get('value', '')}"
    if kind == "Pods":
        current = _metric_current(statuses, index, "pods", "averageValue") or "<unknown>"
        return f"{current}/{_get(spec, 'pods', 'target', 'averageValue') or ''}"
    if kind in ("Resource", "ContainerResource"):
        source = "resource" if kind == "Resource" else "containerResource"
        name, target = _get(spec, source, "name") or "", _get(spec, source, "target") or {}
        if target.get("averageValue") is not None:
            current = _metric_current(statuses, index, source, "averageValue") or "<unknown>"
            return f"{name}: {current}/{target['averageValue']}"
        utilization = _metric_current(statuses, index, source, "averageUtilization")
        current = f"{utilization}%" if utilization is not None else "<unknown>"
        wanted = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None else "<auto>"
        return f"{name}: {current}/{wanted}"
    return "<unknown type>"


def hpa_targets(obj: Mapping[str, Any]) -> str:
    """`formatHPAMetrics`: each metric as current/target, two at most, then "+ N more..."."""
    specs = _get(obj, "spec", "metrics") or []
    if not specs:
        return "<none>"
    statuses = _get(obj, "status", "currentMetrics") or []
    shown = [_hpa_metric(spec, statuses, i) for i, spec in enumerate(specs)]
    text = ", ".join(shown[:2])
    return f"{text} + {len(shown) - 2} more..." if len(shown) > 2 else text


def _hpa_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    target = _get(obj, "spec", "scaleTargetRef") or {}
    minimum = _get(obj, "spec", "minReplicas")
    return [
        obj["metadata"]["name"],
        f"{target.get('kind', '')}/{target.get('name', '')}",
        hpa_targets(obj),
        "<unset>" if minimum is None else str(minimum),
        _get(obj, "spec", "maxReplicas") or 0,
        _get(obj, "status", "currentReplicas") or 0,
        age(obj, now),
    ]


# --- policy, networking, discovery ---------------------------------------------------------------------------------


def _pdb_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    minimum, maximum = spec.get("minAvailable"), spec.get("maxUnavailable")
    return [
        obj["metadata"]["name"],
        "N/A" if minimum is None else str(minimum),
        "N/A" if maximum is None else str(maximum),
        _get(obj, "status", "disruptionsAllowed") or 0,
        age(obj, now),
    ]


def _load_balancer(status: Any) -> str:
    """`ingressLoadBalancerStatusStringer` (wide): each ingress point's IP, else its hostname, once."""
    seen: list[str] = []
    for point in _get(status, "loadBalancer", "ingress") or []:
        value = point.get("ip") or point.get("hostname")
        if value and value not in seen:
            seen.append(value)
    return ",".join(seen)


def _ingress_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    rules = spec.get("rules") or []
    hosts = [rule["host"] for rule in rules if rule.get("host")]
    if not hosts:
        shown = "*"
    elif len(rules) > 3:
        shown = f"{','.join(hosts[:3])} + {len(rules) - 3} more..."
    else:
        shown = ",".join(hosts)
    return [
        obj["metadata"]["name"],
        spec.get("ingressClassName") or "<none>",
        shown,
        _load_balancer(obj.get("status")),
        "80, 443" if spec.get("tls") else "80",
        age(obj, now),
    ]


def _ingress_class_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    parameters = _get(obj, "spec", "parameters")
    shown = "<none>"
    if isinstance(parameters, Mapping):
        group = parameters.get("apiGroup")
        kind = f"{parameters.get('kind', '')}.{group}" if group is not None else str(parameters.get("kind", ""))
        shown = f"{kind}/{parameters.get('name', '')}"
    return [obj["metadata"]["name"], _get(obj, "spec", "controller") or "", shown, age(obj, now)]


def _network_policy_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    selector = _get(obj, "spec", "podSelector")
    # metav1.FormatLabelSelector: an empty selector (every pod) prints as "<none>".
    return [obj["metadata"]["name"], _selector(selector), age(obj, now)]


def _join_host_port(ip: str, port: Any) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def _endpoints_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    """`formatEndpoints`: ip:port of every address and port, three at most."""
    subsets = obj.get("subsets") or []
    if not subsets:
        return [obj["metadata"]["name"], "<none>", age(obj, now)]
    shown: list[str] = []
    count = 0
    for subset in subsets:
        addresses = [a.get("ip", "") for a in subset.get("addresses") or []]
        ports = subset.get("ports") or []
        if not ports:
            count += len(addresses)
            shown.extend(addresses)
            continue
        for port in ports:
            count += len(addresses)
            shown.extend(_join_host_port(ip, port.get("port")) for ip in addresses)
    return [obj["metadata"]["name"], _with_more(shown, count, 3, ""), age(obj, now)]


def _endpoint_slice_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    ports = [
        str(port["port"]) if port.get("port") is not None else str(port.get("name") or "*")
        for port in obj.get("ports") or []
    ]
    addresses = [address for endpoint in obj.get("endpoints") or [] for address in endpoint.get("addresses") or []]
    return [
        obj["metadata"]["name"],
        obj.get("addressType") or "",
        _with_more(ports, len(ports), 3, "<unset>"),
        _with_more(addresses, len(addresses), 3, "<unset>"),
        age(obj, now),
    ]


# --- nodes, volumes, storage ---------------------------------------------------------------------------------------


def _node_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    status, spec = obj.get("status") or {}, obj.get("spec") or {}
    shown = [
        "Ready" if condition.get("status") == "True" else "NotReady"
        for condition in status.get("conditions") or []
        if condition.get("type") == "Ready"
    ][:1] or ["Unknown"]
    if spec.get("unschedulable"):
        shown.append("SchedulingDisabled")
    roles: set[str] = set()
    for key, value in ((obj["metadata"].get("labels")) or {}).items():
        if key.startswith(_NODE_ROLE_PREFIX) and key[len(_NODE_ROLE_PREFIX) :]:
            roles.add(key[len(_NODE_ROLE_PREFIX) :])
        elif key == _NODE_ROLE_LABEL and value:
            roles.add(value)
    info = status.get("nodeInfo") or {}

    def address(kind: str) -> str:
        found = [a.get("address", "") for a in status.get("addresses") or [] if a.get("type") == kind]
        return found[0] if found else "<none>"

    return [
        obj["metadata"]["name"],
        ",".join(shown),
        ",".join(sorted(roles)) or "<none>",
        age(obj, now),
        info.get("kubeletVersion", ""),
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def access_modes(modes: Any) -> str:
    """`GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order, each once."""
    present = set(modes or [])
    short = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP"))
    return ",".join(abbreviation for mode, abbreviation in short if mode in present)


def _storage_class(obj: Mapping[str, Any]) -> str:
    """`GetPersistentVolume(Claim)Class`: the beta annotation first, then spec.storageClassName."""
    annotations = _get(obj, "metadata", "annotations") or {}
    if STORAGE_CLASS_ANNOTATION in annotations:
        return str(annotations[STORAGE_CLASS_ANNOTATION])
    return str(_get(obj, "spec", "storageClassName") or "")


def _phase(obj: Mapping[str, Any]) -> str:
    if _get(obj, "metadata", "deletionTimestamp"):
        return "Terminating"
    return str(_get(obj, "status", "phase") or "")


def _pv_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    claim = spec.get("claimRef")
    return [
        obj["metadata"]["name"],
        _get(spec, "capacity", "storage") or "0",
        access_modes(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy") or "",
        _phase(obj),
        f"{claim.get('namespace', '')}/{claim.get('name', '')}" if isinstance(claim, Mapping) else "",
        _storage_class(obj),
        spec.get("volumeAttributesClassName") or "<unset>",
        _get(obj, "status", "reason") or "",
        age(obj, now),
        spec.get("volumeMode") or "<unset>",
    ]


def _pvc_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    bound = bool(spec.get("volumeName"))
    return [
        obj["metadata"]["name"],
        _phase(obj),
        spec.get("volumeName") or "",
        (_get(status, "capacity", "storage") or "0") if bound else "",
        access_modes(status.get("accessModes")) if bound else "",
        _storage_class(obj),
        spec.get("volumeAttributesClassName") or "<unset>",
        age(obj, now),
        spec.get("volumeMode") or "<unset>",
    ]


def _storage_class_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    annotations = obj["metadata"].get("annotations") or {}
    default = any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)
    return [
        obj["metadata"]["name"] + (" (default)" if default else ""),
        obj.get("provisioner") or "",
        obj.get("reclaimPolicy") or "Delete",
        obj.get("volumeBindingMode") or "Immediate",
        bool(obj.get("allowVolumeExpansion")),
        age(obj, now),
    ]


def _volume_attachment_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    return [
        obj["metadata"]["name"],
        spec.get("attacher") or "",
        _get(spec, "source", "persistentVolumeName") or "",
        spec.get("nodeName") or "",
        bool(_get(obj, "status", "attached")),
        age(obj, now),
    ]


def _csi_driver_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    requests = spec.get("tokenRequests")
    return [
        obj["metadata"]["name"],
        spec.get("attachRequired", True) is not False,
        bool(spec.get("podInfoOnMount")),
        bool(spec.get("storageCapacity")),
        "<unset>" if requests is None else ",".join(str(r.get("audience", "")) for r in requests),
        bool(spec.get("requiresRepublish")),
        ",".join(spec.get("volumeLifecycleModes") or []) or "<none>",
        age(obj, now),
    ]


def _csi_node_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [obj["metadata"]["name"], len(_get(obj, "spec", "drivers") or []), age(obj, now)]


# --- quotas, scheduling, node, admission, apps ---------------------------------------------------------------------


def _resource_quota_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    """`printResourceQuota`: used/hard per resource in name order, `limits.*` in the Limit column."""
    hard, used = _get(obj, "status", "hard") or {}, _get(obj, "status", "used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        cell = f"{resource}: {used.get(resource, '0')}/{hard[resource]}"
        (limits if resource.split(".")[0] == "limits" and "." in resource else requests).append(cell)
    return [obj["metadata"]["name"], age(obj, now), ", ".join(requests), ", ".join(limits)]


def _priority_class_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [
        obj["metadata"]["name"],
        obj.get("value") or 0,
        bool(obj.get("globalDefault")),
        age(obj, now),
        obj.get("preemptionPolicy") or "",
    ]


def _runtime_class_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [obj["metadata"]["name"], obj.get("handler") or "", age(obj, now)]


def _webhook_configuration_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [obj["metadata"]["name"], len(obj.get("webhooks") or []), age(obj, now)]


def _controller_revision_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    """The controller as `formatResourceName`: lower-cased ``Kind.group/name``, ``<none>`` without one."""
    controller = "<none>"
    for reference in obj["metadata"].get("ownerReferences") or []:
        if reference.get("controller"):
            group = str(reference.get("apiVersion", "")).rpartition("/")[0]
            kind = f"{reference.get('kind', '')}.{group}" if group else str(reference.get("kind", ""))
            controller = f"{kind.lower()}/{reference.get('name', '')}"
            break
    return [obj["metadata"]["name"], controller, obj.get("revision") or 0, age(obj, now)]


def csr_condition(obj: Mapping[str, Any]) -> str:
    """`extractCSRStatus`: Denied, else Approved, else Pending; then ",Failed" and ",Issued"."""
    kinds = {condition.get("type") for condition in _get(obj, "status", "conditions") or []}
    status = "Denied" if "Denied" in kinds else "Approved" if "Approved" in kinds else "Pending"
    if "Failed" in kinds:
        status += ",Failed"
    if _get(obj, "status", "certificate"):
        status += ",Issued"
    return status


def _csr_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    seconds = spec.get("expirationSeconds")
    return [
        obj["metadata"]["name"],
        age(obj, now),
        spec.get("signerName") or "<none>",
        spec.get("username") or "",
        "<none>" if seconds is None else human_duration(seconds),
        csr_condition(obj),
    ]


_WEBHOOKS = (NAME, _int_column("Webhooks", "Webhooks indicates the number of webhooks in the configuration"), AGE)

CLUSTER_PRINTERS: dict[tuple[str, str], tuple[list[Column], Row]] = {
    ("autoscaling", "HorizontalPodAutoscaler"): (
        [
            NAME,
            _str_column(
                "Reference",
                "reference to scaled resource; horizontal pod autoscaler will learn the current "
                "resource consumption and will set the desired number of pods by using its Scale subresource.",
            ),
            _str_column(
                "Targets",
                "metrics contains the specifications for which to use to calculate the desired replica count.",
            ),
            _str_column("MinPods", "minReplicas is the lower limit for the number of replicas."),
            _str_column("MaxPods", "maxReplicas is the upper limit for the number of replicas."),
            _str_column(
                "Replicas", "currentReplicas is current number of replicas of pods managed by this autoscaler."
            ),
            AGE,
        ],
        _hpa_row,
    ),  # fmt: skip
    ("policy", "PodDisruptionBudget"): (
        [
            NAME,
            _str_column("Min Available", "The minimum number of pods that must be available."),
            _str_column("Max Unavailable", "The maximum number of pods that may be unavailable."),
            _int_column("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time."),
            AGE,
        ],
        _pdb_row,
    ),
    ("networking.k8s.io", "Ingress"): (
        [
            NAME,
            _str_column(
                "Class", "The name of the IngressClass resource that should be used for additional configuration"
            ),
            _str_column("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
            _str_column("Address", "Address is a list containing ingress points for the load-balancer"),
            _str_column("Ports", "Ports of TLS configurations that open"),
            AGE,
        ],
        _ingress_row,
    ),
    ("networking.k8s.io", "IngressClass"): (
        [
            NAME,
            _str_column("Controller", "Controller that is responsible for handling this class"),
            _str_column("Parameters", "A reference to a resource with additional parameters"),
            AGE,
        ],
        _ingress_class_row,
    ),
    ("networking.k8s.io", "NetworkPolicy"): (
        [
            NAME,
            _str_column("Pod-Selector", "podSelector selects the pods to which this NetworkPolicy object applies."),
            AGE,
        ],
        _network_policy_row,
    ),
    ("", "Endpoints"): (
        [NAME, _str_column("Endpoints", "The set of all endpoints is the union of all subsets."), AGE],
        _endpoints_row,
    ),
    ("discovery.k8s.io", "EndpointSlice"): (
        [
            NAME,
            _str_column("AddressType", "addressType specifies the type of address carried by this EndpointSlice."),
            _str_column("Ports", "ports specifies the list of network ports exposed by each endpoint in this slice."),
            _str_column("Endpoints", "endpoints is a list of unique endpoints in this slice."),
            AGE,
        ],
        _endpoint_slice_row,
    ),
    ("", "Node"): (
        [
            NAME,
            _str_column("Status", "The status of the node"),
            _str_column("Roles", "The roles of the node"),
            AGE,
            _str_column("Version", "Kubelet Version reported by the node."),
            _str_column("Internal-IP", "List of addresses reachable to the node.", 1),
            _str_column("External-IP", "List of addresses reachable to the node.", 1),
            _str_column("OS-Image", "OS Image reported by the node from /etc/os-release.", 1),
            _str_column("Kernel-Version", "Kernel Version reported by the node from 'uname -r'.", 1),
            _str_column(
                "Container-Runtime", "ContainerRuntime Version reported by the node through runtime remote API.", 1
            ),
        ],
        _node_row,
    ),
    ("", "PersistentVolume"): (
        [
            NAME,
            _str_column("Capacity", "capacity is the description of the persistent volume's resources and capacity."),
            _str_column("Access Modes", "accessModes contains all ways the volume can be mounted."),
            _str_column(
                "Reclaim Policy",
                "persistentVolumeReclaimPolicy defines what happens to a persistent volume "
                "when released from its claim.",
            ),
            _str_column(
                "Status", "phase indicates if a volume is available, bound to a claim, or released by a claim."
            ),
            _str_column(
                "Claim",
                "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.",
            ),
            _str_column("StorageClass", "StorageClass of the pv"),
            _str_column("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
            _str_column("Reason", "reason is a brief CamelCase string that describes any failure."),
            AGE,
            _str_column(
                "VolumeMode",
                "volumeMode defines if a volume is intended to be used with a formatted "
                "filesystem or to remain in raw block state.",
                1,
            ),
        ],
        _pv_row,
    ),  # fmt: skip
    ("", "PersistentVolumeClaim"): (
        [
            NAME,
            _str_column("Status", "phase represents the current phase of PersistentVolumeClaim."),
            _str_column("Volume", "volumeName is the binding reference to the PersistentVolume backing this claim."),
            _str_column("Capacity", "capacity represents the actual resources of the underlying volume."),
            _str_column("Access Modes", "accessModes contains the actual access modes the volume backing the PVC has."),
            _str_column("StorageClass", "StorageClass of the pvc"),
            _str_column("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
            AGE,
            _str_column("VolumeMode", "volumeMode defines what type of volume is required by the claim.", 1),
        ],
        _pvc_row,
    ),
    ("storage.k8s.io", "StorageClass"): (
        [
            NAME,
            _str_column("Provisioner", "provisioner indicates the type of the provisioner."),
            _str_column(
                "ReclaimPolicy", "reclaimPolicy controls the reclaimPolicy for dynamically provisioned volumes."
            ),
            _str_column(
                "VolumeBindingMode",
                "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.",
            ),
            _str_column(
                "AllowVolumeExpansion", "allowVolumeExpansion shows whether the storage class allow volume expand."
            ),
            AGE,
        ],
        _storage_class_row,
    ),  # fmt: skip
    ("storage.k8s.io", "VolumeAttachment"): (
        [
            NAME,
            (
                "Attacher",
                "string",
                "name",
                "attacher indicates the name of the volume driver that MUST handle this request.",
                0,
            ),
            _str_column("PV", "persistentVolumeName represents the name of the persistent volume to attach."),
            _str_column("Node", "nodeName represents the node that the volume should be attached to."),
            _boolean("Attached", "attached indicates the volume is successfully attached."),
            AGE,
        ],
        _volume_attachment_row,
    ),  # fmt: skip
    ("storage.k8s.io", "CSIDriver"): (
        [
            NAME,
            _boolean("AttachRequired", "attachRequired indicates this CSI volume driver requires an attach operation."),
            _boolean(
                "PodInfoOnMount",
                "podInfoOnMount indicates this CSI volume driver requires additional pod "
                "information during mount operations.",
            ),
            _boolean(
                "StorageCapacity",
                "storageCapacity indicates that the CSI volume driver wants pod scheduling "
                "to consider the storage capacity.",
            ),
            _str_column("TokenRequests", "tokenRequests indicates the CSI driver needs pods' service account tokens."),
            _boolean(
                "RequiresRepublish",
                "requiresRepublish indicates the CSI driver wants NodePublishVolume being periodically called.",
            ),
            _str_column("Modes", "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports."),
            AGE,
        ],
        _csi_driver_row,
    ),  # fmt: skip
    ("storage.k8s.io", "CSINode"): (
        [NAME, _int_column("Drivers", "Drivers indicates the number of CSI drivers registered on the node"), AGE],
        _csi_node_row,
    ),
    ("", "ResourceQuota"): (
        [
            NAME,
            AGE,
            _str_column("Request", "Request represents a minimum amount of cpu/memory that a container may consume."),
            _str_column(
                "Limit",
                "Limits control the maximum amount of cpu/memory that a container may use independent "
                "of contention on the node.",
            ),
        ],
        _resource_quota_row,
    ),  # fmt: skip
    ("scheduling.k8s.io", "PriorityClass"): (
        [
            NAME,
            _int_column("Value", "value represents the integer value of this priority class."),
            _boolean(
                "Global-Default",
                "globalDefault specifies whether this PriorityClass should be considered as "
                "the default priority for pods that do not have any priority class.",
            ),
            AGE,
            _str_column("PreemptionPolicy", "preemptionPolicy is the Policy for preempting pods with lower priority."),
        ],
        _priority_class_row,
    ),  # fmt: skip
    ("node.k8s.io", "RuntimeClass"): (
        [NAME, _str_column("Handler", "handler specifies the underlying runtime and configuration."), AGE],
        _runtime_class_row,
    ),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): (list(_WEBHOOKS), _webhook_configuration_row),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): (list(_WEBHOOKS), _webhook_configuration_row),
    ("apps", "ControllerRevision"): (
        [
            NAME,
            _str_column("Controller", "Controller of the object"),
            _str_column("Revision", "Revision indicates the revision of the state represented by Data."),
            AGE,
        ],
        _controller_revision_row,
    ),
    ("certificates.k8s.io", "CertificateSigningRequest"): (
        [
            NAME,
            AGE,
            _str_column("SignerName", "signerName indicates the requested signer."),
            _str_column(
                "Requestor", "username contains the name of the user that created the CertificateSigningRequest."
            ),
            _str_column(
                "RequestedDuration", "expirationSeconds is the requested duration of validity of the certificate."
            ),
            _str_column("Condition", "conditions applied to the request."),
        ],
        _csr_row,
    ),
}
