"""kube-apiserver refuses Endpoints and EndpointSlices that point at special addresses (ValidateNonSpecialIP):
unspecified, loopback, link-local and link-local multicast addresses are a 422 with the field path and Go's
message, as on every cluster and in envtest. An operator (or a test) that writes `127.0.0.1` into an Endpoints
passed here before and failed there."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyop.api.validation import ip_problems, non_special_ip_problems
from pyop.testing import TestAPIServer
from testing_server.helpers import Api, official_client

ENDPOINTS = "/api/v1/namespaces/default/endpoints"
SLICES = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
LOOPBACK = "may not be in the loopback range (127.0.0.0/8, ::1/128)"


def causes(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["reason"], c.get("field", ""), c["message"]) for c in body["details"]["causes"]]


def endpoints(*ips: str, not_ready: tuple[str, ...] = ()) -> dict[str, Any]:
    subset: dict[str, Any] = {"ports": [{"port": 8080}]}
    if ips:
        subset["addresses"] = [{"ip": ip} for ip in ips]
    if not_ready:
        subset["notReadyAddresses"] = [{"ip": ip} for ip in not_ready]
    return {"metadata": {"name": "web"}, "subsets": [subset]}


@pytest.mark.parametrize(
    ("ip", "message"),
    [
        ("127.0.0.1", LOOPBACK),
        ("::1", LOOPBACK),
        ("0.0.0.0", "may not be unspecified (0.0.0.0)"),
        ("::", "may not be unspecified (::)"),
        ("169.254.169.254", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
        ("fe80::1", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
        ("224.0.0.251", "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"),
        ("pod.example", "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    ],
)
async def test_an_endpoints_address_may_not_be_special(api: Api, ip: str, message: str) -> None:
    status, body = await api.post(ENDPOINTS, endpoints(ip))
    assert status == 422, body
    assert body["reason"] == "Invalid"
    assert causes(body) == [("FieldValueInvalid", "subsets[0].addresses[0].ip", f'Invalid value: "{ip}": {message}')]
    assert (
        body["message"] == f'Endpoints "web" is invalid: subsets[0].addresses[0].ip: Invalid value: "{ip}": {message}'
    )


async def test_not_ready_addresses_are_checked_too_and_good_ones_are_stored(api: Api) -> None:
    status, body = await api.post(ENDPOINTS, endpoints("10.244.0.7", not_ready=("10.244.0.8", "127.0.0.53")))
    assert status == 422
    assert causes(body) == [
        ("FieldValueInvalid", "subsets[0].notReadyAddresses[1].ip", f'Invalid value: "127.0.0.53": {LOOPBACK}')
    ]
    created = await api.create_ok(ENDPOINTS, endpoints("10.244.0.7", "2001:db8::7", not_ready=("192.0.2.8",)))
    assert [a["ip"] for a in created["subsets"][0]["addresses"]] == ["10.244.0.7", "2001:db8::7"]

    changed = {**created, "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": 8080}]}]}
    status, body = await api.put(f"{ENDPOINTS}/web", changed)
    assert status == 422 and causes(body)[0][1] == "subsets[0].addresses[0].ip"  # an update is checked as a create


def slice_of(address_type: str, *addresses: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "web-1", "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": address_type,
        "endpoints": [{"addresses": [address]} for address in addresses],
        "ports": [{"name": "http", "port": 8080}],
    }


async def test_an_endpoint_slice_holds_non_special_addresses_of_its_family(api: Api) -> None:
    status, body = await api.post(SLICES, slice_of("IPv4", "10.0.0.1", "2001:db8::1", "127.0.0.1"))
    assert status == 422, body
    assert causes(body) == [
        (
            "FieldValueInvalid",
            "endpoints[1].addresses[0]",
            'Invalid value: "2001:db8::1": must be a valid IPv4 address',
        ),
        ("FieldValueInvalid", "endpoints[2].addresses[0]", f'Invalid value: "127.0.0.1": {LOOPBACK}'),
    ]
    status, body = await api.post(SLICES, slice_of("IPv6", "::1"))
    assert status == 422 and causes(body) == [
        ("FieldValueInvalid", "endpoints[0].addresses[0]", f'Invalid value: "::1": {LOOPBACK}')
    ]
    created = await api.create_ok(SLICES, slice_of("IPv4", "10.0.0.1", "10.0.0.2"))
    assert [e["addresses"] for e in created["endpoints"]] == [["10.0.0.1"], ["10.0.0.2"]]
    fqdn = {**slice_of("FQDN", "web.example.com"), "metadata": {"name": "web-fqdn"}}
    await api.create_ok(SLICES, fqdn)  # names, not addresses: no IP rule applies


async def test_the_official_client_gets_the_422(server: TestAPIServer) -> None:
    import kubernetes

    def create() -> tuple[int, str]:
        with official_client(server) as client:
            body = kubernetes.client.V1Endpoints(
                metadata=kubernetes.client.V1ObjectMeta(name="local"),
                subsets=[
                    kubernetes.client.V1EndpointSubset(addresses=[kubernetes.client.V1EndpointAddress(ip="127.0.0.1")])
                ],
            )
            try:
                kubernetes.client.CoreV1Api(client).create_namespaced_endpoints("default", body)
            except kubernetes.client.ApiException as error:
                return error.status, str(error.body)
            return 201, ""

    status, body = await asyncio.to_thread(create)
    assert status == 422 and LOOPBACK in body


def test_the_checks_are_validations_own() -> None:
    assert ip_problems("10.0.0.1") == [] and ip_problems("10.0.0") != []
    assert non_special_ip_problems("10.0.0.1") == [] and non_special_ip_problems("239.1.1.1") == []
    assert non_special_ip_problems("::ffff:127.0.0.1") == [LOOPBACK]  # Go reads an IPv4-mapped address as IPv4
    assert non_special_ip_problems("ff02::1") == [
        "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
    ]
