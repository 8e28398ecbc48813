"""The ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount), on Pod creates.

- A pod that names no account runs as `default`.
- The account must exist in the pod's namespace: otherwise 403, `pods "web" is forbidden: error looking up
  service account default/default: serviceaccount "default" not found`. The test server's service-account
  controller creates `default` in every namespace, as kube-controller-manager's does.
- Unless the pod (or else its account) sets `automountServiceAccountToken: false`, every init container and
  container without a mount at /var/run/secrets/kubernetes.io/serviceaccount gets one, from a projected volume
  `kube-api-access-<5 random characters>` holding the bound token (3607 s), the cluster CA
  (`kube-root-ca.crt`) and the namespace.
- A pod with no image pull secrets gets its account's.
Mirror pods (static pods a kubelet reports) are left alone.
"""

from __future__ import annotations

import copy
import secrets
from typing import Any, Final

from pyop.api.status import forbidden
from pyop.apiserver.admission.plugins import CREATE, Attributes
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.storage.store import Store
from pyop.testing.admission.pods import MIRROR_POD_ANNOTATION, is_pod_request, is_pod_write

DEFAULT_SERVICE_ACCOUNT: Final = "default"
TOKEN_MOUNT_PATH: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_VOLUME_PREFIX: Final = "kube-api-access-"
ROOT_CA_CONFIG_MAP: Final = "kube-root-ca.crt"
_TOKEN_EXPIRATION_SECONDS: Final = 3607  # serviceaccount.WarnOnlyBoundTokenExpirationSeconds
_PROJECTED_DEFAULT_MODE: Final = 0o644
_NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apiserver's SimpleNameGenerator


def token_volume(name: str) -> dict[str, Any]:
    """The projected volume the plugin adds, as kube encodes it."""
    return {
        "name": name,
        "projected": {
            "defaultMode": _PROJECTED_DEFAULT_MODE,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": _TOKEN_EXPIRATION_SECONDS, "path": "token"}},
                {"configMap": {"name": ROOT_CA_CONFIG_MAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {
                    "downwardAPI": {
                        "items": [
                            {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
                        ]
                    }
                },
            ],
        },
    }


class ServiceAccountAdmission:
    name = "ServiceAccount"

    def may_handle(self, operation: str, resource_type: ResourceType, subresource: str) -> bool:
        return is_pod_request(operation, resource_type, subresource, CREATE)

    def handles(self, attributes: Attributes) -> bool:
        return is_pod_write(attributes, CREATE)

    def admit(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None:
        metadata = obj.get("metadata") or {}
        if MIRROR_POD_ANNOTATION in (metadata.get("annotations") or {}):
            return
        spec = obj.setdefault("spec", {})
        account_name = spec.get("serviceAccountName") or DEFAULT_SERVICE_ACCOUNT
        spec["serviceAccountName"] = spec["serviceAccount"] = account_name  # v1 writes the deprecated copy too
        account = store.get("serviceaccounts", attributes.namespace, account_name)
        if account is None:
            raise forbidden(
                "pods",
                "",
                attributes.name,
                f"error looking up service account {attributes.namespace}/{account_name}: "
                f'serviceaccount "{account_name}" not found',
            )
        if _automounts(account, spec):
            _mount_token(spec)
        if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
            spec["imagePullSecrets"] = copy.deepcopy(account["imagePullSecrets"])


def _automounts(account: dict[str, Any], spec: dict[str, Any]) -> bool:
    """The pod's choice, else its account's, else yes."""
    if spec.get("automountServiceAccountToken") is not None:
        return bool(spec["automountServiceAccountToken"])
    if account.get("automountServiceAccountToken") is not None:
        return bool(account["automountServiceAccountToken"])
    return True


def _mount_token(spec: dict[str, Any]) -> None:
    taken = {volume.get("name") for volume in spec.get("volumes") or []}
    name = _volume_name(taken)
    mounted = False
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or []:
            mounts = container.get("volumeMounts") or []
            if any(mount.get("mountPath") == TOKEN_MOUNT_PATH for mount in mounts):
                continue
            container["volumeMounts"] = [*mounts, {"name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}]
            mounted = True
    if mounted:
        spec["volumes"] = [*(spec.get("volumes") or []), token_volume(name)]


def _volume_name(taken: set[Any]) -> str:
    while True:
        name = TOKEN_VOLUME_PREFIX + "".join(secrets.choice(_NAME_ALPHABET) for _ in range(5))
        if name not in taken:
            return name


__all__ = ["DEFAULT_SERVICE_ACCOUNT", "ROOT_CA_CONFIG_MAP", "ServiceAccountAdmission", "token_volume"]
