"""Where kube-apiserver sends a `proxy` subresource request: the ResourceLocation of pods, services and nodes.

A proxy path names its target as ``name``, ``name:port`` or ``scheme:name:port`` (apimachinery's
`SplitSchemeNamePort`: the scheme, when given, is ``http`` or ``https``; the port is not required to be a number).
Each resource resolves it in its own way, with its own errors, which clients meet as they would on a cluster:

- a pod (pkg/registry/core/pod/strategy.go, ResourceLocation): the pod must exist (404), the port defaults to the
  first port a container declares (none: the scheme's default, 80 or 443), and the pod's first IP must be a global
  unicast address (400 ``address not allowed``: a pod no kubelet has reported an IP for cannot be reached);
- a service (pkg/registry/core/service/storage, ResourceLocation): a port number is mapped to the service port's
  name (503 ``no service port 80 found for service "web"``), then a ready address with that port name is picked,
  at random, from the service's Endpoints (404 when there are none; 503 ``no endpoints available for service``),
  and kept only when it points at a pod of the namespace that has that IP;
- a node (pkg/registry/core/node/rest, ResourceLocation): the node must exist (404), its address is the first of
  kube-apiserver's default `--kubelet-preferred-address-types` (Hostname, InternalDNS, InternalIP, ExternalDNS,
  ExternalIP) it has (otherwise a 500 ``no preferred addresses found; known addresses: [...]``), the kubelet's
  port is ``status.daemonEndpoints.kubeletEndpoint.Port`` (default 10250) and its scheme https; another port is
  refused on an address that is not global unicast (400 ``address not allowed``).

What comes back is a `Location`: the address a cluster would dial and, for the test server, which test handler
plays the process listening there (a pod's port: ``server.pod_streams``; a node's: ``server.node_proxies``).
"""

from __future__ import annotations

import ipaddress
import random
from dataclasses import dataclass
from typing import Any, Final

from pyop.api.status import ApiError, bad_request, not_found
from pyop.apiserver.storage.store import Store

_SCHEMES: Final = ("", "http", "https")
_DEFAULT_PORTS: Final = {"": 80, "http": 80, "https": 443}
KUBELET_PORT: Final = 10250  # ports.KubeletPort, kube-apiserver's --kubelet-port default
# kube-apiserver's --kubelet-preferred-address-types default.
_NODE_ADDRESS_TYPES: Final = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP")


@dataclass(frozen=True)
class Location:
    """An upstream a proxy request goes to: ``scheme`` as the request named it (empty: http), ``host`` (an IP or
    a node's hostname), ``port`` as a string (kube keeps what the client wrote; an empty one is the scheme's
    default), and the owner whose handler answers: (namespace, pod) or ("", node)."""

    scheme: str
    host: str
    port: str
    namespace: str
    owner: str
    kubelet: bool = False  # a node's kubelet port (the handler registered for the kubelet answers)

    @property
    def address(self) -> str:
        """host:port as Go's net.JoinHostPort writes it (dial errors name it)."""
        port = self.port or str(_DEFAULT_PORTS.get(self.scheme, 80))
        return f"[{self.host}]:{port}" if ":" in self.host else f"{self.host}:{port}"

    @property
    def port_number(self) -> int | None:
        """The port to dial, or None when it is no number (kube-apiserver cannot build the upstream URL then)."""
        port = self.port or str(_DEFAULT_PORTS.get(self.scheme, 80))
        return int(port) if port.isdigit() else None


def split_scheme_name_port(target: str) -> tuple[str, str, str] | None:
    """(scheme, name, port) of ``name``, ``name:port`` or ``scheme:name:port`` (utilnet.SplitSchemeNamePort);
    None when the name is empty, the scheme is not http/https, or there are more parts."""
    parts = target.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in _SCHEMES:
        return None
    return scheme, name, port


def is_global_unicast(text: str) -> bool:
    """Go's net.ParseIP(...).IsGlobalUnicast(): private ranges count, loopback, link-local, multicast, the
    unspecified and the broadcast address do not."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_unspecified or ip.is_loopback or ip.is_link_local or ip.is_multicast:
        return False
    return not (isinstance(ip, ipaddress.IPv4Address) and ip == ipaddress.IPv4Address("255.255.255.255"))


def pod_ip(pod: dict[str, Any]) -> str:
    """The pod's primary IP: ``status.podIPs[0].ip`` (v1's ``status.podIP`` is the same address, converted)."""
    status = pod.get("status") or {}
    ips = status.get("podIPs") or []
    if ips and isinstance(ips[0], dict):
        return str(ips[0].get("ip") or "")
    return str(status.get("podIP") or "")


def pod_location(store: Store, namespace: str, target: str) -> Location:
    split = split_scheme_name_port(target)
    if split is None:
        raise bad_request(f'invalid pod request "{target}"')
    scheme, name, port = split
    pod = store.get("pods", namespace, name)
    if pod is None:
        raise not_found("pods", "", name)
    if not port:
        for container in (pod.get("spec") or {}).get("containers") or []:
            ports = container.get("ports") or []
            if ports:
                port = str(ports[0].get("containerPort", ""))
                break
    ip = pod_ip(pod)
    if not is_global_unicast(ip):
        raise bad_request("address not allowed")
    return Location(scheme, ip, port, namespace, name)


def service_location(store: Store, namespace: str, target: str) -> Location:
    split = split_scheme_name_port(target)
    if split is None:
        raise bad_request(f'invalid service request "{target}"')
    scheme, name, port_name = split
    if port_name.lstrip("-").isdigit():  # a port number: the service port's name it stands for
        service = store.get("services", namespace, name)
        if service is None:
            raise not_found("services", "", name)
        number = int(port_name)
        for service_port in (service.get("spec") or {}).get("ports") or []:
            if service_port.get("port") == number:
                port_name = str(service_port.get("name") or "")
                break
        else:
            raise ApiError(503, f'no service port {number} found for service "{name}"')
    endpoints = store.get("endpoints", namespace, name)
    if endpoints is None:
        raise not_found("endpoints", "", name)
    subsets = endpoints.get("subsets") or []
    if not subsets:
        raise ApiError(503, f'no endpoints available for service "{name}"')
    start = random.randrange(len(subsets))  # noqa: S311 - kube picks a subset and an address at random too
    for offset in range(len(subsets)):
        subset = subsets[(start + offset) % len(subsets)]
        addresses = subset.get("addresses") or []
        if not addresses:
            continue
        for endpoint_port in subset.get("ports") or []:
            if str(endpoint_port.get("name") or "") != port_name:
                continue
            first = random.randrange(len(addresses))  # noqa: S311
            for attempt in range(len(addresses)):
                address = addresses[(first + attempt) % len(addresses)]
                pod = _endpoint_pod(store, namespace, address)
                if pod is not None:
                    return Location(scheme, str(address["ip"]), str(endpoint_port.get("port", "")), namespace, pod)
    raise ApiError(503, f'no endpoints available for service "{target}"')


def _endpoint_pod(store: Store, namespace: str, address: dict[str, Any]) -> str | None:
    """The pod an endpoint address stands for, when it is valid (isValidAddress): a targetRef in the namespace to
    a pod that has the address's IP."""
    ref = address.get("targetRef") or {}
    if not ref or ref.get("namespace", "") != namespace:
        return None
    pod = store.get("pods", namespace, str(ref.get("name", "")))
    if pod is None:
        return None
    ips = [entry.get("ip") for entry in (pod.get("status") or {}).get("podIPs") or []] or [pod_ip(pod)]
    return str(ref["name"]) if address.get("ip") in ips else None


def node_location(store: Store, target: str) -> Location:
    split = split_scheme_name_port(target)
    if split is None:
        raise bad_request(f'invalid node request "{target}"')
    scheme, name, port = split
    node = store.get("nodes", "", name)
    if node is None:
        raise not_found("nodes", "", name)
    status = node.get("status") or {}
    hostname = _preferred_address(node)
    endpoint = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port") or KUBELET_PORT
    kubelet_port = str(endpoint)
    if not port or port == kubelet_port:
        return Location("https", hostname, kubelet_port, "", name, kubelet=True)
    # IsProxyableHostname: another port must resolve to global unicast addresses only (a hostname's lookup is
    # not made here: the test server resolves no node names).
    if _is_ip(hostname) and not is_global_unicast(hostname):
        raise bad_request("address not allowed")
    return Location(scheme, hostname, port, "", name)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _preferred_address(node: dict[str, Any]) -> str:
    addresses = (node.get("status") or {}).get("addresses") or []
    for address_type in _NODE_ADDRESS_TYPES:
        for address in addresses:
            if address.get("type") == address_type and address.get("address"):
                return str(address["address"])
        if address_type == "Hostname":  # kubelets before 1.5 registered the hostname label only
            label = ((node.get("metadata") or {}).get("labels") or {}).get("kubernetes.io/hostname")
            if label:
                return str(label)
    known = " ".join(f"{{{address.get('type', '')} {address.get('address', '')}}}" for address in addresses)
    raise UnknownError(f"no preferred addresses found; known addresses: [{known}]")


class UnknownError(Exception):
    """An error that is no API status in kube (a plain Go error): kube-apiserver answers it as a 500 Status
    without a reason (ErrorToAPIStatus)."""


__all__ = [
    "KUBELET_PORT",
    "Location",
    "UnknownError",
    "is_global_unicast",
    "node_location",
    "pod_ip",
    "pod_location",
    "service_location",
    "split_scheme_name_port",
]
