"""kube-apiserver's own `kubernetes` Service and its endpoints: `default/kubernetes`, the cluster IP in-cluster
clients reach the API server at (``kubernetes.default.svc``), and the Endpoints and EndpointSlice that say where
the API server really is.

Why: every kube-apiserver creates them at start-up (its kubernetes-service controller and endpoint reconciler),
envtest's included, so an operator that lists or prunes Services, Endpoints or EndpointSlices in `default`, or
counts them, meets them on a cluster; a test server without them lets such a test pass here and fail there.

The Service is the first host of the service range with port 443 (`https`) targeting the server's secure port,
labelled `component: apiserver` and `provider: kubernetes`. The Endpoints (labelled
`endpointslice.kubernetes.io/skip-mirror: "true"`) and the EndpointSlice (`kubernetes.io/service-name:
kubernetes`, one ready endpoint) hold the advertised address and the secure port, as kube-apiserver's
EndpointsAdapter writes them. All three are written by manager `kube-apiserver` and made again when deleted; the
endpoints are also reset when changed (the reconciler's "Resetting endpoints for master service"), at once here
rather than at its next ten-second pass.

The advertised address is kube-apiserver's ``--advertise-address`` (`TestAPIServer(advertise_address=...)`), by
default this host's address on its default route, as kube-apiserver picks one when given none (envtest gives
none: since Kubernetes 1.21 a loopback address may not be advertised, an Endpoints address may not be in
127.0.0.0/8). The server listens on loopback only, so the address is not dialled: like envtest's, it is what a
cluster would show. A host with no default route gets no Endpoints or EndpointSlice (kube-apiserver would not start).
"""

from __future__ import annotations

import socket
from typing import Any, Final

from pyop.api.status import ApiError
from pyop.api.validation import non_special_ip_problems
from pyop.apiserver.registry.namespaces import namespace_state
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.testing.builtins.defaulting import SERVICE_CIDR

NAME: Final = "kubernetes"
NAMESPACE: Final = "default"
MANAGER: Final = "kube-apiserver"
SKIP_MIRROR_LABEL: Final = "endpointslice.kubernetes.io/skip-mirror"
SERVICE_NAME_LABEL: Final = "kubernetes.io/service-name"

# The kinds kept, by storage key: (group, plural) for the registry, and the fields the reconciler resets.
_KINDS: Final[dict[str, tuple[str, str, tuple[str, ...]]]] = {
    "services": ("", "services", ()),  # made again when deleted, never reset (the controller only creates it)
    "endpoints": ("", "endpoints", ("subsets",)),
    "endpointslices.discovery.k8s.io": ("discovery.k8s.io", "endpointslices", ("addressType", "endpoints", "ports")),
}
STORAGE_KEYS: Final = tuple(_KINDS)

# A TEST-NET-3 address (RFC 5737): "connecting" a UDP socket to it sends nothing, and the address the kernel picks
# as its source is the one of the interface the default route leaves by.
_OFF_HOST: Final = "203.0.113.1"


def default_route_address() -> str | None:
    """This host's address on its default route (kube-apiserver's ChooseHostInterface), or None without one."""
    for family, target in ((socket.AF_INET, _OFF_HOST), (socket.AF_INET6, "2001:db8::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as probe:
                probe.connect((target, 9))
                address = str(probe.getsockname()[0])
        except OSError:
            continue
        if not non_special_ip_problems(address):
            return address
    return None


def check_advertise_address(address: str) -> str:
    """``address`` if kube-apiserver could advertise it (an IP an Endpoints may hold), else ValueError."""
    problems = non_special_ip_problems(address)
    if problems:
        raise ValueError(f"advertise address {address!r} is not allowed: it {'; '.join(problems)}")
    return address


class KubernetesService:
    """Keeps `default/kubernetes` (Service, Endpoints, EndpointSlice) as kube-apiserver does."""

    def __init__(self, operations: Operations, advertise_address: str | None = None) -> None:
        self.operations = operations
        self._advertise_address = advertise_address
        self._address_chosen = advertise_address is not None
        self.secure_port: int | None = None
        self._resetting = False

    @property
    def advertise_address(self) -> str | None:
        """The address the endpoints hold: the one given, else this host's on its default route (looked up once)."""
        if not self._address_chosen:
            self._advertise_address = default_route_address()
            self._address_chosen = True
        return self._advertise_address

    def serve(self, secure_port: int) -> None:
        """The server listens on ``secure_port``: the objects are created, or put right when kept storage holds
        them from an earlier run on another port (the reconciler's pass at start-up)."""
        self.secure_port = secure_port
        self._ensure()
        for storage_key in STORAGE_KEYS:
            stored = self.operations.store.get(storage_key, NAMESPACE, NAME)
            if stored is not None:
                self.committed(storage_key, "MODIFIED", stored, None)

    def committed(self, storage_key: str, event_type: str, obj: dict[str, Any], prev: dict[str, Any] | None) -> None:
        """A Service, Endpoints or EndpointSlice was written: `default/kubernetes` ones are put right again."""
        metadata = obj["metadata"]
        if metadata.get("name") != NAME or metadata.get("namespace") != NAMESPACE or self.secure_port is None:
            return
        if event_type == "DELETED":
            self._ensure()
            return
        wanted = self._wanted(storage_key)
        if wanted is None or self._resetting:
            return
        fields = _KINDS[storage_key][2]
        if fields and _kept(wanted, fields) != _kept(obj, fields):
            self._reset(storage_key, obj, wanted)

    # --- what kube-apiserver writes -------------------------------------------------------------------------------

    def _wanted(self, storage_key: str) -> dict[str, Any] | None:
        """The object kube-apiserver keeps under ``storage_key`` (None: none, for want of an address)."""
        if storage_key == "services":
            return self._service()
        address = self.advertise_address
        if address is None:
            return None
        return self._endpoints(address) if storage_key == "endpoints" else self._endpoint_slice(address)

    def _service(self) -> dict[str, Any]:
        cluster_ip = str(next(SERVICE_CIDR.hosts()))
        return {
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

    def _port(self) -> dict[str, Any]:
        return {"name": "https", "port": self.secure_port, "protocol": "TCP"}

    def _endpoints(self, address: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": NAME, "labels": {SKIP_MIRROR_LABEL: "true"}},
            "subsets": [{"addresses": [{"ip": address}], "ports": [self._port()]}],
        }

    def _endpoint_slice(self, address: str) -> dict[str, Any]:
        return {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": NAME, "labels": {SERVICE_NAME_LABEL: NAME}},
            "addressType": "IPv6" if ":" in address else "IPv4",
            "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
            "ports": [self._port()],
        }

    # --- writing ----------------------------------------------------------------------------------------------

    def _ensure(self) -> None:
        store = self.operations.store
        if self.secure_port is None or namespace_state(store, NAMESPACE) != "live":
            return
        for storage_key, (group, plural, _) in _KINDS.items():
            wanted = self._wanted(storage_key)
            if wanted is None or store.get(storage_key, NAMESPACE, NAME) is not None:
                continue
            resource_type = self.operations.resources.lookup(group, "v1", plural)
            try:
                self.operations.create(resource_type, NAMESPACE, wanted, WriteOptions(field_manager=MANAGER))
            except ApiError as error:
                if error.code != 409:  # created meanwhile
                    raise

    def _reset(self, storage_key: str, current: dict[str, Any], wanted: dict[str, Any]) -> None:
        group, plural, fields = _KINDS[storage_key]
        resource_type = self.operations.resources.lookup(group, "v1", plural)
        body = {**current, **_kept(wanted, fields)}
        body["metadata"] = {**current["metadata"], "labels": wanted["metadata"]["labels"]}
        self._resetting = True  # the reset's own commit comes back here: it is not reset again
        try:
            self.operations.update(resource_type, NAMESPACE, NAME, body, WriteOptions(field_manager=MANAGER))
        except ApiError as error:
            if error.code not in (404, 409):  # gone or changed meanwhile: that commit brings us back here
                raise
        finally:
            self._resetting = False


def _kept(obj: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """The fields the reconciler compares and resets: ``fields`` and the labels."""
    return {field: obj.get(field) for field in fields} | {"labels": (obj["metadata"].get("labels") or {})}
