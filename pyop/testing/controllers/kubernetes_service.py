"""kube-apiserver's own `kubernetes` Service: `default/kubernetes`, the cluster IP in-cluster clients reach the API
server at (``kubernetes.default.svc``).

Why: every kube-apiserver creates it at start-up (its kubernetes-service controller), envtest's included, so an
operator that lists or prunes Services in `default`, or counts them, meets it on a cluster; a test server without
it lets such a test pass here and fail there. The Service is the first host of the service range with port 443
(`https`) targeting the server's secure port, labelled `component: apiserver` and `provider: kubernetes`, and
written by manager `kube-apiserver`. A deleted one is created again, as the controller's periodic check does (at
once here, not within ten seconds).

Not made: its Endpoints and EndpointSlice, which a cluster's endpoint reconciler fills with the API server's
advertised address. This server's only address is loopback, which kube-apiserver's Endpoints validation refuses
(an endpoint may not be in 127.0.0.0/8), so there is no truthful object to show.
"""

from __future__ import annotations

from typing import Any, Final

from pyop.api.status import ApiError
from pyop.apiserver.registry.namespaces import namespace_state
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.testing.builtins.defaulting import SERVICE_CIDR

NAME: Final = "kubernetes"
NAMESPACE: Final = "default"
MANAGER: Final = "kube-apiserver"
STORAGE_KEY: Final = "services"


class KubernetesService:
    def __init__(self, operations: Operations) -> None:
        self.operations = operations
        self.secure_port: int | None = None

    def serve(self, secure_port: int) -> None:
        """The server listens on ``secure_port``: the Service is created (once; its target port is this one)."""
        self.secure_port = secure_port
        self._ensure()

    def service_changed(self, event_type: str, service: dict[str, Any]) -> None:
        metadata = service["metadata"]
        if event_type == "DELETED" and metadata.get("name") == NAME and metadata.get("namespace") == NAMESPACE:
            self._ensure()

    def _ensure(self) -> None:
        store = self.operations.store
        if self.secure_port is None or namespace_state(store, NAMESPACE) != "live":
            return
        if store.get(STORAGE_KEY, NAMESPACE, NAME) is not None:
            return
        service_type = self.operations.resources.lookup("", "v1", STORAGE_KEY)
        cluster_ip = str(next(SERVICE_CIDR.hosts()))
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": NAME, "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {
                "type": "ClusterIP",
                "clusterIP": cluster_ip,
                "clusterIPs": [cluster_ip],
                "sessionAffinity": "None",
                "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": self.secure_port}],
            },
        }
        try:
            self.operations.create(service_type, NAMESPACE, body, WriteOptions(field_manager=MANAGER))
        except ApiError as error:
            if error.code != 409:  # created meanwhile
                raise
