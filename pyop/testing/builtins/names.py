"""What discovery says about built-in resources that no definition or path carries: short names, categories and
the field selectors each kind supports.

kube-apiserver's REST storages declare these in Go (`ShortNames()`, `Categories()` and the strategies'
`GetAttrs`/field label conversion funcs in pkg/registry/*); no OpenAPI document has them, so they are written
down here, keyed by (group, plural), from Kubernetes v1.32's pkg/registry (unchanged through 1.37 for these).
"""

from __future__ import annotations

from typing import Final

SHORT_NAMES: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("", "componentstatuses"): ("cs",),
    ("", "configmaps"): ("cm",),
    ("", "endpoints"): ("ep",),
    ("", "events"): ("ev",),
    ("", "limitranges"): ("limits",),
    ("", "namespaces"): ("ns",),
    ("", "nodes"): ("no",),
    ("", "persistentvolumeclaims"): ("pvc",),
    ("", "persistentvolumes"): ("pv",),
    ("", "pods"): ("po",),
    ("", "replicationcontrollers"): ("rc",),
    ("", "resourcequotas"): ("quota",),
    ("", "serviceaccounts"): ("sa",),
    ("", "services"): ("svc",),
    ("apiextensions.k8s.io", "customresourcedefinitions"): ("crd", "crds"),
    ("apps", "daemonsets"): ("ds",),
    ("apps", "deployments"): ("deploy",),
    ("apps", "replicasets"): ("rs",),
    ("apps", "statefulsets"): ("sts",),
    ("autoscaling", "horizontalpodautoscalers"): ("hpa",),
    ("batch", "cronjobs"): ("cj",),
    ("certificates.k8s.io", "certificatesigningrequests"): ("csr",),
    ("events.k8s.io", "events"): ("ev",),
    ("networking.k8s.io", "ingresses"): ("ing",),
    ("networking.k8s.io", "ipaddresses"): ("ip",),
    ("networking.k8s.io", "networkpolicies"): ("netpol",),
    ("policy", "poddisruptionbudgets"): ("pdb",),
    ("scheduling.k8s.io", "priorityclasses"): ("pc",),
    ("storage.k8s.io", "storageclasses"): ("sc",),
    ("storage.k8s.io", "volumeattributesclasses"): ("vac",),
}

_ALL: Final = ("all",)
_API_EXTENSIONS: Final = ("api-extensions",)
CATEGORIES: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    # `kubectl get all`
    ("", "pods"): _ALL,
    ("", "replicationcontrollers"): _ALL,
    ("", "services"): _ALL,
    ("apps", "daemonsets"): _ALL,
    ("apps", "deployments"): _ALL,
    ("apps", "replicasets"): _ALL,
    ("apps", "statefulsets"): _ALL,
    ("autoscaling", "horizontalpodautoscalers"): _ALL,
    ("batch", "cronjobs"): _ALL,
    ("batch", "jobs"): _ALL,
    # `kubectl get api-extensions`
    ("apiextensions.k8s.io", "customresourcedefinitions"): _API_EXTENSIONS,
    ("apiregistration.k8s.io", "apiservices"): _API_EXTENSIONS,
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): _API_EXTENSIONS,
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): _API_EXTENSIONS,
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): _API_EXTENSIONS,
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): _API_EXTENSIONS,
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies"): _API_EXTENSIONS,
    ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"): _API_EXTENSIONS,
}


def _same(*labels: str) -> dict[str, str]:
    return {label: label for label in labels}


# Field selector label -> object path, beyond metadata.name and metadata.namespace (which every kind has).
FIELD_LABELS: Final[dict[tuple[str, str], dict[str, str]]] = {
    ("", "pods"): _same(
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    ("", "events"): _same(
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    ("", "secrets"): _same("type"),
    ("", "namespaces"): _same("status.phase"),
    ("", "nodes"): _same("spec.unschedulable"),
    ("", "replicationcontrollers"): _same("status.replicas"),
    ("apps", "replicasets"): _same("status.replicas"),
    ("batch", "jobs"): _same("status.successful"),
    ("certificates.k8s.io", "certificatesigningrequests"): _same("spec.signerName"),
}
