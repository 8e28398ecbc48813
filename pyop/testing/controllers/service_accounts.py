"""kube-controller-manager's service-account controller: every live namespace has a `default` ServiceAccount.

Pods that name no account run as `default` (the ServiceAccount admission plugin refuses a pod whose account is
missing), so the account must exist as soon as the namespace does. A cluster creates it a moment after the
namespace; here it is created in the same step, so a test that creates a namespace and then a pod never races
the controller. Deleted while its namespace lives, it is made again, as the controller does.
"""

from __future__ import annotations

from typing import Any, Final

from pyop.api.status import ApiError
from pyop.apiserver.registry.namespaces import namespace_state
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.testing.admission.service_account import DEFAULT_SERVICE_ACCOUNT

MANAGER: Final = "kube-controller-manager"
STORAGE_KEY: Final = "serviceaccounts"


class ServiceAccountsController:
    def __init__(self, operations: Operations) -> None:
        self.operations = operations

    def namespace_added(self, namespace: dict[str, Any]) -> None:
        self._ensure_default(namespace["metadata"]["name"])

    def account_deleted(self, account: dict[str, Any]) -> None:
        metadata = account["metadata"]
        if metadata.get("name") == DEFAULT_SERVICE_ACCOUNT:
            self._ensure_default(metadata.get("namespace", ""))

    def _ensure_default(self, namespace: str) -> None:
        store = self.operations.store
        if namespace_state(store, namespace) != "live":
            return
        if store.get(STORAGE_KEY, namespace, DEFAULT_SERVICE_ACCOUNT) is not None:
            return
        account_type = self.operations.resources.lookup("", "v1", STORAGE_KEY)
        body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT_SERVICE_ACCOUNT}}
        try:
            self.operations.create(account_type, namespace, body, WriteOptions(field_manager=MANAGER))
        except ApiError as error:
            if error.code != 409:  # created meanwhile: fine
                raise
