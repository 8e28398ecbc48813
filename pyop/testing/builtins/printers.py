"""kube-apiserver's printer columns of built-in kinds (`pkg/printers/internalversion`), for Table output.

Each entry of `BUILTIN_PRINTERS` is a kind's column definitions and the function that makes one row's cells, as the
server-side printers do (the server always prints every column, priority 1 ones included: kubectl drops those
unless ``-o wide``). Ages are formatted here, on the server (`duration.HumanDuration`), as kube-apiserver does.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pyop.apiserver.endpoints.printing import AGE as AGE
from pyop.apiserver.endpoints.printing import AGE_DOC as _AGE_DOC
from pyop.apiserver.endpoints.printing import CREATED_AT as CREATED_AT
from pyop.apiserver.endpoints.printing import NAME as NAME
from pyop.apiserver.endpoints.printing import NAME_DOC as _NAME_DOC
from pyop.apiserver.endpoints.printing import Column as Column
from pyop.apiserver.endpoints.printing import Row as Row
from pyop.apiserver.endpoints.printing import age as age
from pyop.apiserver.endpoints.printing import created_at_row as created_at_row
from pyop.apiserver.endpoints.printing import default_row as default_row
from pyop.apiserver.endpoints.printing import human_duration as human_duration
from pyop.apiserver.endpoints.printing import parse_time as parse_time
from pyop.apiserver.endpoints.printing import since as since
from pyop.testing.builtins.event_versions import to_core


# The generic column helpers live in pyop.apiserver.endpoints.printing (re-exported here for this module's users).
def _get(obj: Any, *path: str) -> Any:
    for name in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(name)
    return obj


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _or_none(value: Any) -> str:
    return str(value) if value else "<none>"


def _selector(selector: Any) -> str:
    """`metav1.LabelSelectorAsSelector(...).String()`: ``app=web,tier in (a,b)``; ``<none>`` when empty."""
    if not isinstance(selector, Mapping):
        return "<none>"
    terms = [f"{key}={value}" for key, value in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression.get("key", ""), expression.get("operator", ""), expression.get("values")
        listed = ",".join(sorted(values or []))
        terms.append(
            {"In": f"{key} in ({listed})", "NotIn": f"{key} notin ({listed})", "Exists": key}.get(operator, f"!{key}")
        )
    return ",".join(sorted(terms)) or "<none>"


def _map_selector(selector: Any) -> str:
    if not isinstance(selector, Mapping) or not selector:
        return "<none>"
    return ",".join(f"{key}={value}" for key, value in sorted(selector.items()))


def _pod_spec(obj: Mapping[str, Any], *template: str) -> Mapping[str, Any]:
    spec = _get(obj, *template, "spec")
    return spec if isinstance(spec, Mapping) else {}


def _containers(spec: Mapping[str, Any]) -> tuple[str, str]:
    containers = spec.get("containers") or []
    return (
        ",".join(str(c.get("name", "")) for c in containers),
        ",".join(str(c.get("image", "")) for c in containers),
    )


_CONTAINERS: list[Column] = [
    ("Containers", "string", "", "Names of each container in the template.", 1),
    ("Images", "string", "", "Images referenced by each container in the template.", 1),
]
_SELECTOR: Column = ("Selector", "string", "", "The label selector of the objects.", 1)


# --- built-in printers --------------------------------------------------------------------------------------


def _pod_status(pod: Mapping[str, Any]) -> str:
    """`printPod`'s STATUS: the phase, or the reason of the container that keeps the pod from running."""
    status = pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or ""
    for container in reversed(status.get("containerStatuses") or []):
        state = container.get("state") or {}
        waiting, terminated = state.get("waiting") or {}, state.get("terminated")
        if waiting.get("reason"):
            reason = waiting["reason"]
        elif terminated is not None:
            if terminated.get("reason"):
                reason = terminated["reason"]
            elif terminated.get("signal"):
                reason = f"Signal:{terminated['signal']}"
            else:
                reason = f"ExitCode:{terminated.get('exitCode', 0)}"
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return str(reason)


def _pod_row(pod: dict[str, Any], now: datetime) -> list[Any]:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for container in statuses if container.get("ready"))
    restarts = sum(_int(container.get("restartCount")) for container in statuses)
    last = max(
        (
            moment
            for container in statuses
            if (moment := parse_time(_get(container, "lastState", "terminated", "finishedAt"))) is not None
        ),
        default=None,
    )
    restart_cell = (
        f"{restarts} ({human_duration((now - last).total_seconds())} ago)" if restarts and last else str(restarts)
    )
    gates = spec.get("readinessGates") or []
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    gate_cell = (
        f"{sum(1 for g in gates if conditions.get(g.get('conditionType')) == 'True')}/{len(gates)}"
        if gates
        else "<none>"
    )
    return [
        pod["metadata"]["name"],
        f"{ready}/{len(spec.get('containers') or [])}",
        _pod_status(pod),
        restart_cell,
        age(pod, now),
        _or_none(status.get("podIP")),
        _or_none(spec.get("nodeName")),
        _or_none(status.get("nominatedNodeName")),
        gate_cell,
    ]


def _deployment_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(_pod_spec(obj, "spec", "template"))
    return [
        obj["metadata"]["name"],
        f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'))}",
        _int(status.get("updatedReplicas")),
        _int(status.get("availableReplicas")),
        age(obj, now),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _replicaset_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(_pod_spec(obj, "spec", "template"))
    return [
        obj["metadata"]["name"],
        _int(spec.get("replicas")),
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        age(obj, now),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _statefulset_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(_pod_spec(obj, "spec", "template"))
    ready = f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'))}"
    return [obj["metadata"]["name"], ready, age(obj, now), names, images]


def _daemonset_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(_pod_spec(obj, "spec", "template"))
    counts = (
        "desiredNumberScheduled",
        "currentNumberScheduled",
        "numberReady",
        "updatedNumberScheduled",
        "numberAvailable",
    )
    return [
        obj["metadata"]["name"],
        *(_int(status.get(count)) for count in counts),
        _map_selector(_pod_spec(obj, "spec", "template").get("nodeSelector")),
        age(obj, now),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _service_external_ip(spec: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    kind = spec.get("type") or "ClusterIP"
    external = list(spec.get("externalIPs") or [])
    if kind == "ExternalName":
        return str(spec.get("externalName") or "<none>")
    if kind == "LoadBalancer":
        ingress = [i.get("ip") or i.get("hostname") for i in _get(status, "loadBalancer", "ingress") or []]
        found = [*filter(None, ingress), *external]
        return ",".join(found) if found else "<pending>"
    return ",".join(external) if external else "<none>"


def _service_ports(spec: Mapping[str, Any]) -> str:
    cells = []
    for port in spec.get("ports") or []:
        protocol = port.get("protocol") or "TCP"
        node_port = port.get("nodePort")
        cells.append(f"{port.get('port')}:{node_port}/{protocol}" if node_port else f"{port.get('port')}/{protocol}")
    return ",".join(cells) or "<none>"


def _service_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        obj["metadata"]["name"],
        spec.get("type") or "ClusterIP",
        _or_none(spec.get("clusterIP")),
        _service_external_ip(spec, status),
        _service_ports(spec),
        age(obj, now),
        _map_selector(spec.get("selector")),
    ]


def _data_count(obj: Mapping[str, Any]) -> int:
    return len(obj.get("data") or {}) + len(obj.get("binaryData") or {}) + len(obj.get("stringData") or {})


def _configmap_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [obj["metadata"]["name"], _data_count(obj), age(obj, now)]


def _secret_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [obj["metadata"]["name"], obj.get("type") or "Opaque", _data_count(obj), age(obj, now)]


def _namespace_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [obj["metadata"]["name"], str(_get(obj, "status", "phase") or ""), age(obj, now)]


def _serviceaccount_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [obj["metadata"]["name"], len(obj.get("secrets") or []), age(obj, now)]


def _job_status(obj: Mapping[str, Any]) -> str:
    conditions = {c.get("type"): c.get("status") for c in _get(obj, "status", "conditions") or []}
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    for condition in ("Complete", "Failed", "FailureTarget", "SuccessCriteriaMet", "Suspended"):
        if conditions.get(condition) == "True":
            return condition
    return "Running"


def _job_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    succeeded = _int(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    elif _int(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {spec['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    start, end = parse_time(status.get("startTime")), parse_time(status.get("completionTime"))
    duration = "" if start is None else human_duration(((end or now) - start).total_seconds())
    names, images = _containers(_pod_spec(obj, "spec", "template"))
    return [
        obj["metadata"]["name"],
        _job_status(obj),
        completions,
        duration,
        age(obj, now),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _cronjob_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(_pod_spec(obj, "spec", "jobTemplate", "spec", "template"))
    last = status.get("lastScheduleTime")
    return [
        obj["metadata"]["name"],
        spec.get("schedule", ""),
        _or_none(spec.get("timeZone")),
        "True" if spec.get("suspend") else "False",
        len(status.get("active") or []),
        since(last, now) if last else "<none>",
        age(obj, now),
        names,
        images,
        _selector(_get(spec, "jobTemplate", "spec", "selector")),
    ]


def _event_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    """`printEvent` (core/v1): ages of the first and last sighting, ``kind/name`` of the object, the count."""
    first = since(obj.get("firstTimestamp"), now) if obj.get("firstTimestamp") else since(obj.get("eventTime"), now)
    last = since(obj.get("lastTimestamp"), now) if obj.get("lastTimestamp") else first
    count = _int(obj.get("count"))
    series = obj.get("series")
    if isinstance(series, Mapping):
        last, count = since(series.get("lastObservedTime"), now), _int(series.get("count"))
    elif count == 0:
        count = 1  # singleton events of the new API have no count
    involved = obj.get("involvedObject") or {}
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingController") or ""
    instance = source.get("host") or obj.get("reportingInstance") or ""
    return [
        last,
        obj.get("type", ""),
        obj.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        f"{component}, {instance}" if instance else component,
        str(obj.get("message", "")).strip(),
        first,
        count,
        obj["metadata"]["name"],
    ]


def _lease_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [obj["metadata"]["name"], _get(obj, "spec", "holderIdentity") or "", age(obj, now)]


def _role_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    """Roles and ClusterRoles: the creation time as RFC 3339 (a `date` column, as kube-apiserver prints them)."""
    return [obj["metadata"]["name"], (obj.get("metadata") or {}).get("creationTimestamp")]


def _binding_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    subjects = obj.get("subjects") or []

    def of(kind: str) -> str:
        return ", ".join(
            f"{s.get('namespace', '')}/{s.get('name', '')}" if kind == "ServiceAccount" else str(s.get("name", ""))
            for s in subjects
            if s.get("kind") == kind
        )

    role = obj.get("roleRef") or {}
    return [
        obj["metadata"]["name"],
        f"{role.get('kind', '')}/{role.get('name', '')}",
        age(obj, now),
        of("User"),
        of("Group"),
        of("ServiceAccount"),
    ]


def _columns(*columns: Column | list[Column]) -> list[Column]:
    out: list[Column] = []
    for column in columns:
        out.extend(column if isinstance(column, list) else [column])
    return out


def _int_column(name: str, doc: str) -> Column:
    return (name, "integer", "", doc, 0)


def _str_column(name: str, doc: str, priority: int = 0) -> Column:
    return (name, "string", "", doc, priority)


BUILTIN_PRINTERS: dict[tuple[str, str], tuple[list[Column], Row]] = {
    ("", "Pod"): (
        _columns(
            NAME,
            _str_column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
            _str_column("Status", "The aggregate status of the containers in this pod."),
            _str_column("Restarts", "The number of times the containers in this pod have been restarted."),
            AGE,
            _str_column("IP", "IP address allocated to the pod. Routable at least within the cluster.", 1),
            _str_column("Node", "NodeName is a request to schedule this pod onto a specific node.", 1),
            _str_column("Nominated Node", "nominatedNodeName is set when this pod preempts other pods.", 1),
            _str_column("Readiness Gates", "If specified, all readiness gates will be evaluated.", 1),
        ),
        _pod_row,
    ),
    ("apps", "Deployment"): (
        _columns(
            NAME,
            _str_column("Ready", "Number of the pod with ready state"),
            _int_column(
                "Up-to-date",
                "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
            ),
            _int_column(
                "Available",
                "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
            ),
            AGE,
            _CONTAINERS,
            _SELECTOR,
        ),
        _deployment_row,
    ),
    ("apps", "ReplicaSet"): (
        _columns(
            NAME,
            _int_column("Desired", "Replicas is the number of desired replicas."),
            _int_column("Current", "Replicas is the most recently observed number of replicas."),
            _int_column("Ready", "The number of ready replicas for this replica set."),
            AGE,
            _CONTAINERS,
            _SELECTOR,
        ),
        _replicaset_row,
    ),
    ("apps", "StatefulSet"): (
        _columns(NAME, _str_column("Ready", "Number of the pod with ready state"), AGE, _CONTAINERS),
        _statefulset_row,
    ),
    ("apps", "DaemonSet"): (
        _columns(
            NAME,
            _int_column("Desired", "The total number of nodes that should be running the daemon pod."),
            _int_column("Current", "The number of nodes that are running at least one daemon pod."),
            _int_column("Ready", "The number of nodes that should be running the daemon pod and have one ready."),
            _int_column("Up-to-date", "The total number of nodes that are running updated daemon pod."),
            _int_column("Available", "The number of nodes running the daemon pod with it available."),
            _str_column("Node Selector", "NodeSelector is a selector which must be true for the pod to fit on a node."),
            AGE,
            _CONTAINERS,
            _SELECTOR,
        ),
        _daemonset_row,
    ),
    ("", "Service"): (
        _columns(
            NAME,
            _str_column("Type", "type determines how the Service is exposed."),
            _str_column("Cluster-IP", "clusterIP is the IP address of the service."),
            _str_column(
                "External-IP",
                "externalIPs: IP addresses for which nodes in the cluster also accept traffic for this service.",
            ),
            _str_column("Port(s)", "The list of ports that are exposed by this service."),
            AGE,
            _str_column(
                "Selector", "Route service traffic to pods with label keys and values matching this selector.", 1
            ),
        ),
        _service_row,
    ),
    ("", "ConfigMap"): (_columns(NAME, _int_column("Data", "Number of keys in the data."), AGE), _configmap_row),
    ("", "Secret"): (
        _columns(
            NAME,
            _str_column("Type", "The type of secret"),
            _int_column("Data", "Number of items in the secret"),
            AGE,
        ),
        _secret_row,
    ),
    ("", "Namespace"): (
        _columns(NAME, _str_column("Status", "The status of the namespace"), AGE),
        _namespace_row,
    ),
    ("", "ServiceAccount"): (
        _columns(NAME, _int_column("Secrets", "Secrets is a list of the secrets in the same namespace."), AGE),
        _serviceaccount_row,
    ),
    ("batch", "Job"): (
        _columns(
            NAME,
            _str_column("Status", "Status of the job."),
            _str_column("Completions", "The desired number of successfully finished pods the job should be run with."),
            _str_column("Duration", "Time required to complete the job."),
            AGE,
            _CONTAINERS,
            _SELECTOR,
        ),
        _job_row,
    ),
    ("", "Event"): (
        _columns(
            _str_column("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
            _str_column("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
            _str_column("Reason", "This should be a short, machine understandable string that gives the reason."),
            _str_column("Object", "The object that this event is about."),
            _str_column("Subobject", "The field of the object the event is about (fieldPath).", 1),
            _str_column("Source", "The component reporting this event.", 1),
            _str_column("Message", "A human-readable description of the status of this operation."),
            _str_column("First Seen", "The time at which the event was first recorded.", 1),
            ("Count", "string", "", "The number of times this event has occurred.", 1),
            ("Name", "string", "name", _NAME_DOC, 1),
        ),
        _event_row,
    ),
    ("coordination.k8s.io", "Lease"): (
        _columns(
            NAME, _str_column("Holder", "holderIdentity contains the identity of the holder of a current lease."), AGE
        ),
        _lease_row,
    ),
    ("rbac.authorization.k8s.io", "Role"): (_columns(NAME, ("Created At", "date", "", _AGE_DOC, 0)), _role_row),
    ("rbac.authorization.k8s.io", "ClusterRole"): (_columns(NAME, ("Created At", "date", "", _AGE_DOC, 0)), _role_row),
    ("rbac.authorization.k8s.io", "RoleBinding"): (
        _columns(
            NAME,
            _str_column("Role", "RoleRef can reference a Role in the current namespace or a ClusterRole."),
            AGE,
            _str_column("Users", "Users in the binding", 1),
            _str_column("Groups", "Groups in the binding", 1),
            _str_column("ServiceAccounts", "ServiceAccounts in the binding", 1),
        ),
        _binding_row,
    ),
    ("batch", "CronJob"): (
        _columns(
            NAME,
            _str_column("Schedule", "The schedule in Cron format."),
            _str_column("Timezone", "The time zone name for the given schedule."),
            _str_column("Suspend", "This flag tells the controller to suspend subsequent executions."),
            _int_column("Active", "A list of pointers to currently running jobs."),
            _str_column("Last Schedule", "Information when was the last time the job was successfully scheduled."),
            AGE,
            _CONTAINERS,
            _SELECTOR,
        ),
        _cronjob_row,
    ),
}


BUILTIN_PRINTERS[("rbac.authorization.k8s.io", "ClusterRoleBinding")] = BUILTIN_PRINTERS[
    ("rbac.authorization.k8s.io", "RoleBinding")
]


def _events_v1_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    """events.k8s.io/v1 Events print as core Events do (kube prints the one internal type for both APIs)."""
    return _event_row(to_core(obj), now)


BUILTIN_PRINTERS[("events.k8s.io", "Event")] = (BUILTIN_PRINTERS[("", "Event")][0], _events_v1_row)


def _apiservice_row(obj: dict[str, Any], now: datetime) -> list[Any]:
    """kube-aggregator's APIService table: the Service as namespace/name (Local without one), Available as the
    condition's status, with its reason unless True (Unknown without the condition)."""
    service = _get(obj, "spec", "service")
    where = f"{service.get('namespace', '')}/{service.get('name', '')}" if isinstance(service, dict) else "Local"
    available = "Unknown"
    for condition in _get(obj, "status", "conditions") or []:
        if condition.get("type") == "Available":
            status, reason = condition.get("status", ""), condition.get("reason", "")
            available = f"{status} ({reason})" if status != "True" and reason else status
    return [obj["metadata"]["name"], where, available, age(obj, now)]


BUILTIN_PRINTERS[("apiregistration.k8s.io", "APIService")] = (
    _columns(
        NAME,
        _str_column("Service", "The reference to the service that hosts this API endpoint."),
        _str_column("Available", "Whether this service is available."),
        AGE,
    ),
    _apiservice_row,
)
