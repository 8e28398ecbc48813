"""The APIService Available condition as kube-aggregator's availability controller sets it, the 503 of an
unavailable group/version, and the extension-apiserver-authentication ConfigMap an aggregated server reads."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from testing_server.helpers import Api

from aggregator.backend import GROUP, GROUP_VERSION, VERSION, Backend
from aggregator.conftest import API_SERVICE, authentication_info, new_backend
from aggregator.helpers import condition, wait_for_condition
from pyop.testing import TestAPIServer
from pyop.testing.controllers.kubernetes_service import default_route_address
from pyop.webhook.certificates.authority import issued_by

FLUNDERS = f"/apis/{GROUP_VERSION}/namespaces/default/flunders"


def _api_service(name: str, service: dict[str, Any] | None, group: str = GROUP, version: str = VERSION) -> Any:
    spec: dict[str, Any] = {"group": group, "version": version, "groupPriorityMinimum": 1000, "versionPriority": 15}
    if service is not None:
        spec["service"] = service
    return {"metadata": {"name": name}, "spec": spec}


async def test_the_configmap_publishes_the_request_header_settings(server: TestAPIServer) -> None:
    data = authentication_info(server)
    assert {key: json.loads(value) for key, value in data.items() if key != "requestheader-client-ca-file"} == {
        "requestheader-username-headers": ["X-Remote-User"],
        "requestheader-uid-headers": ["X-Remote-Uid"],
        "requestheader-group-headers": ["X-Remote-Group"],
        "requestheader-extra-headers-prefix": ["X-Remote-Extra-"],
        "requestheader-allowed-names": ["front-proxy-client"],
    }
    assert data["requestheader-client-ca-file"].encode() == server.aggregator.request_header_ca
    assert "client-ca-file" not in data  # the test server authenticates no client certificates
    identity = server.aggregator.identity
    assert identity is not None and issued_by(identity.client.certificate, server.aggregator.request_header_ca)


async def test_the_roles_an_aggregated_server_is_bound_to_exist(server: TestAPIServer, api: Api) -> None:
    status, reader = await api.get(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles/extension-apiserver-authentication-reader"
    )
    assert status == 200 and reader["rules"][0]["resourceNames"] == ["extension-apiserver-authentication"]
    status, delegator = await api.get("/apis/rbac.authorization.k8s.io/v1/clusterroles/system:auth-delegator")
    assert status == 200
    assert {rule["resources"][0] for rule in delegator["rules"]} == {"tokenreviews", "subjectaccessreviews"}


async def test_a_registered_server_is_available_until_it_stops(
    server: TestAPIServer, api: Api, backend: Backend, registered: dict[str, Any]
) -> None:
    available = registered["status"]["conditions"][0]
    assert (available["type"], available["status"], available["reason"], available["message"]) == (
        "Available",
        "True",
        "Passed",
        "all checks passed",
    )
    checks = [seen for seen in backend.seen if seen.path == f"/apis/{GROUP_VERSION}"]
    assert (checks[0].user, checks[0].groups, checks[0].client_cn) == (
        "system:kube-aggregator",
        ["system:masters"],
        "front-proxy-client",
    )
    await backend.stop()
    down = await wait_for_condition(server, API_SERVICE, "False", "FailedDiscoveryCheck")
    url = f"{backend.url}/apis/{GROUP_VERSION}"
    port = backend.url.rsplit(":", 1)[1]
    assert down["message"] == (
        f'failing or missing response from {url}: Get "{url}": dial tcp 127.0.0.1:{port}: connect: connection refused'
    )
    async with api.session.get(FLUNDERS) as response:
        assert (response.status, await response.text()) == (503, "service unavailable\n")
        assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    await backend.start()  # the same port again
    up = await wait_for_condition(server, API_SERVICE, "True", "Passed")
    assert up["lastTransitionTime"] >= down["lastTransitionTime"]
    status, _ = await api.get(FLUNDERS)
    assert status == 200


async def test_a_bad_status_from_discovery_fails_the_check(server: TestAPIServer, backend: Backend) -> None:
    assert backend.serving_ca is not None
    registered = await server.register_api_service(
        GROUP, "v2", backend.url, ca_bundle=backend.serving_ca.certificate, service_name="wardle-v2"
    )
    url = f"{backend.url}/apis/{GROUP}/v2"
    assert registered["status"]["conditions"][0] == {
        "type": "Available",
        "status": "False",
        "lastTransitionTime": registered["status"]["conditions"][0]["lastTransitionTime"],
        "reason": "FailedDiscoveryCheck",
        "message": f"failing or missing response from {url}: bad status from {url}: 404",
    }


async def test_the_transition_time_moves_only_when_the_status_changes(
    server: TestAPIServer, api: Api, registered: dict[str, Any]
) -> None:
    first = registered["status"]["conditions"][0]
    status, _ = await api.patch(
        f"/apis/apiregistration.k8s.io/v1/apiservices/{API_SERVICE}",
        {"metadata": {"labels": {"touched": "yes"}}},
        "application/merge-patch+json",
    )
    assert status == 200
    await server.aggregator.availability.sync(API_SERVICE)  # type: ignore[union-attr]
    assert condition(server, API_SERVICE) == first


async def test_unroutable_services_get_kube_aggregators_reasons(server: TestAPIServer, api: Api) -> None:
    apiservices = "/apis/apiregistration.k8s.io/v1/apiservices"
    await api.create_ok(
        apiservices,
        _api_service("v1.missing.example.com", {"namespace": "default", "name": "gone"}, "missing.example.com", "v1"),
    )
    found = await wait_for_condition(server, "v1.missing.example.com", "False", "ServiceNotFound")
    assert found["message"] == 'service/gone in "default" is not present'

    await api.create_ok(
        "/api/v1/namespaces/default/services",
        {"metadata": {"name": "plain"}, "spec": {"ports": [{"name": "https", "port": 443}]}},
    )
    await api.create_ok(
        apiservices,
        _api_service(
            "v1.plain.example.com", {"namespace": "default", "name": "plain", "port": 443}, "plain.example.com", "v1"
        ),
    )
    found = await wait_for_condition(server, "v1.plain.example.com", "False", "EndpointsNotFound")
    assert found["message"] == 'cannot find endpoints for service/plain in "default"'
    await api.create_ok(
        "/api/v1/namespaces/default/endpoints",
        {
            "metadata": {"name": "plain"},
            "subsets": [{"notReadyAddresses": [{"ip": "10.0.0.9"}], "ports": [{"name": "https", "port": 1}]}],
        },
    )
    found = await wait_for_condition(server, "v1.plain.example.com", "False", "MissingEndpoints")
    assert found["message"] == 'endpoints for service/plain in "default" have no addresses with port name "https"'

    await api.create_ok(
        apiservices,
        _api_service(
            "v1.wrongport.example.com",
            {"namespace": "default", "name": "plain", "port": 8443},
            "wrongport.example.com",
            "v1",
        ),
    )
    found = await wait_for_condition(server, "v1.wrongport.example.com", "False", "ServicePortError")
    assert found["message"] == 'service/plain in "default" is not listening on port 8443'

    await api.create_ok(apiservices, _api_service("v1.local.example.com", None, "local.example.com", "v1"))
    found = await wait_for_condition(server, "v1.local.example.com", "True", "Local")
    assert found["message"] == "Local APIServices are always available"
    async with api.session.get("/apis/missing.example.com/v1/namespaces/default/things") as response:
        assert (response.status, await response.text()) == (503, "service unavailable\n")


async def test_endpoints_route_a_cluster_ip_service_as_aggregator_routing_does(server: TestAPIServer, api: Api) -> None:
    """With --enable-aggregator-routing (there is no kube-proxy here), the Service's endpoint addresses are dialled.
    An Endpoints may not hold a loopback address (422, as on a cluster), so the backend listens on this host's
    address on its default route, as an aggregated server in a pod listens on the pod's address."""
    address = default_route_address()
    if address is None:
        pytest.skip("this host has no address besides loopback for an Endpoints to hold")
    backend = new_backend(server, host=address)
    await backend.start()
    try:
        await _route_through_endpoints(server, api, backend, address)
    finally:
        await backend.stop()
        backend.remove_files()


async def _route_through_endpoints(server: TestAPIServer, api: Api, backend: Backend, address: str) -> None:
    assert backend.serving_ca is not None
    port = int(backend.url.rsplit(":", 1)[1])
    name = "v1alpha1-wardle-example-com"  # the name the backend's certificate carries (conftest)
    await api.create_ok(
        "/api/v1/namespaces/default/services",
        {"metadata": {"name": name}, "spec": {"ports": [{"name": "https", "port": 443}]}},
    )
    loopback = {"metadata": {"name": name}, "subsets": [{"addresses": [{"ip": "127.0.0.1"}]}]}
    status, refused = await api.post("/api/v1/namespaces/default/endpoints", loopback)
    assert status == 422 and refused["details"]["causes"][0]["field"] == "subsets[0].addresses[0].ip"
    await api.create_ok(
        "/api/v1/namespaces/default/endpoints",
        {
            "metadata": {"name": name},
            "subsets": [{"addresses": [{"ip": address}], "ports": [{"name": "https", "port": port}]}],
        },
    )
    body = _api_service(API_SERVICE, {"namespace": "default", "name": name, "port": 443})
    body["spec"]["caBundle"] = base64.b64encode(backend.serving_ca.certificate).decode()
    await api.create_ok("/apis/apiregistration.k8s.io/v1/apiservices", body)
    await wait_for_condition(server, API_SERVICE, "True", "Passed")
    status, listed = await api.get(FLUNDERS)
    assert status == 200 and listed["kind"] == "FlunderList"


@pytest.mark.parametrize("url", ["http://127.0.0.1:8443", "https://127.0.0.1", "127.0.0.1:8443"])
async def test_register_api_service_wants_an_https_url_with_a_port(server: TestAPIServer, url: str) -> None:
    with pytest.raises(ValueError, match=r"must be https://<host>:<port>") as refused:
        await server.register_api_service(GROUP, VERSION, url)
    assert repr(url) in str(refused.value)
    assert server.store.get("apiservices.apiregistration.k8s.io", "", f"{VERSION}.{GROUP}") is None  # nothing made
