"""kube-controller-manager's root-ca-cert-publisher: ConfigMap `kube-root-ca.crt` (`ca.crt`: the cluster's CA)
in every live namespace, which the ServiceAccount admission plugin's token volume projects into every pod.

The CA is the test server's serving CA (what its kubeconfig trusts), known once the server starts (`publish`);
a server on plain http has none and publishes nothing. A deleted or changed ConfigMap is put back, as the
controller does.
"""

from __future__ import annotations

from typing import Any, Final

from pyop.api.status import ApiError
from pyop.apiserver.registry.namespaces import namespace_state
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.testing.admission.service_account import ROOT_CA_CONFIG_MAP

MANAGER: Final = "kube-controller-manager"
STORAGE_KEY: Final = "configmaps"


class RootCAPublisher:
    def __init__(self, operations: Operations) -> None:
        self.operations = operations
        self.ca_pem: str | None = None

    def publish(self, ca_pem: str) -> None:
        """Start publishing ``ca_pem``, in every namespace there is."""
        self.ca_pem = ca_pem
        for namespace in list(self.operations.store.objects("namespaces")):
            self._ensure(namespace["metadata"]["name"])

    def namespace_added(self, namespace: dict[str, Any]) -> None:
        self._ensure(namespace["metadata"]["name"])

    def config_map_changed(self, event_type: str, config_map: dict[str, Any]) -> None:
        metadata = config_map["metadata"]
        if metadata.get("name") != ROOT_CA_CONFIG_MAP:
            return
        if event_type == "DELETED" or (config_map.get("data") or {}) != self._data():
            self._ensure(metadata.get("namespace", ""))

    def _data(self) -> dict[str, str]:
        return {"ca.crt": self.ca_pem or ""}

    def _ensure(self, namespace: str) -> None:
        if self.ca_pem is None:
            return
        store = self.operations.store
        if namespace_state(store, namespace) != "live":
            return
        current = store.get(STORAGE_KEY, namespace, ROOT_CA_CONFIG_MAP)
        if current is not None and (current.get("data") or {}) == self._data():
            return
        config_map_type = self.operations.resources.lookup("", "v1", STORAGE_KEY)
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": ROOT_CA_CONFIG_MAP, "annotations": {"kubernetes.io/description": _DESCRIPTION}},
            "data": self._data(),
        }
        options = WriteOptions(field_manager=MANAGER)
        try:
            if current is None:
                self.operations.create(config_map_type, namespace, body, options)
            else:
                body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                self.operations.update(config_map_type, namespace, ROOT_CA_CONFIG_MAP, body, options)
        except ApiError as error:
            if error.code != 409:  # written meanwhile: the next event brings it back here
                raise


_DESCRIPTION: Final = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the "
    "internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes "
    "clusters."
)
