"""Where an APIService's Service is reached, or why it cannot be: the aggregator's service resolution.

A test cluster has no kube-proxy and no pods, so a Service is reached the way kube-apiserver reaches it with
``--enable-aggregator-routing=true``: through the addresses of its Endpoints (``subsets[].addresses[].ip`` and the
port named as the Service's port), which a test may write pointing at 127.0.0.1. A Service of type ExternalName is
reached at ``externalName:<APIService port>`` (client-go's ``ResolveCluster``), so the usual way to route an
APIService to a server listening locally is an ExternalName Service with ``externalName: 127.0.0.1`` (what
``TestAPIServer.register_api_service`` creates). The reasons for an unroutable Service are kube-aggregator's
availability reasons, with its messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyop.apiserver.storage.store import Store
from pyop.testing.aggregator.apiservice import ServiceReference


@dataclass(frozen=True, slots=True)
class Resolution:
    """A base URL (``https://host:port``), or the reason and message of an Available=False condition."""

    url: str = ""
    reason: str = ""
    message: str = ""


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def resolve(store: Store, reference: ServiceReference) -> Resolution:
    service = store.get("services", reference.namespace, reference.name)
    where = f'service/{reference.name} in "{reference.namespace}"'
    if service is None:
        return Resolution(reason="ServiceNotFound", message=f"{where} is not present")
    spec: dict[str, Any] = service.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return Resolution(url=f"https://{_host(spec.get('externalName', ''))}:{reference.port}")
    port = next((p for p in spec.get("ports") or [] if p.get("port") == reference.port), None)
    if port is None:
        return Resolution(reason="ServicePortError", message=f"{where} is not listening on port {reference.port}")
    endpoints = store.get("endpoints", reference.namespace, reference.name)
    if endpoints is None:
        return Resolution(
            reason="EndpointsNotFound",
            message=f"cannot find endpoints for {where}",
        )
    port_name = port.get("name", "")
    for subset in endpoints.get("subsets") or []:
        addresses = subset.get("addresses") or []
        target = next((p for p in subset.get("ports") or [] if p.get("name", "") == port_name), None)
        if addresses and target is not None:
            return Resolution(url=f"https://{_host(addresses[0].get('ip', ''))}:{target.get('port')}")
    return Resolution(
        reason="MissingEndpoints",
        message=f'endpoints for {where} have no addresses with port name "{port_name}"',
    )
