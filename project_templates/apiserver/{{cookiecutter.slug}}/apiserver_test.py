{{ cookiecutter.license_header }}"""The aggregated API server's {{ cookiecutter.plural }}, in-process, behind pyop's test API server (no cluster needed).

The test API server plays kube-apiserver and kube-aggregator: an APIService sends every request under
/apis/{{ cookiecutter.qualified_group }}/{{ cookiecutter.version }} to this project's server, which trusts the aggregator's identity
headers by its request-header client certificate and asks the test server back (SubjectAccessReview) whether the
caller may do what it asks. pyop's client only ever talks to the test server, as kubectl would to a cluster.
"""

from __future__ import annotations

{% if cookiecutter.certificates == "pyop" -%}
import asyncio
{% endif -%}
from pathlib import Path

import pytest
import yaml
{%- if cookiecutter.certificates == "pyop" %}
from pyop.apiserver import AggregatedServer, RecommendedOptions
from pyop.client import ApiError, Client, ForbiddenError
{%- else %}
from pyop.apiserver import AggregatedServer
from pyop.client import Client, ForbiddenError
{%- endif %}
from pyop.testing import TestAPIServer

from {{ cookiecutter.package }}.apiserver import GROUP_VERSIONS
{{ cookiecutter.types_import }}

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLE = PROJECT_ROOT / "config" / "samples" / "{{ cookiecutter.group }}_{{ cookiecutter.version }}_{{ cookiecutter.kind_lower }}.yaml"
{%- if cookiecutter.namespaced %}
NAMESPACE: str | None = "default"
{%- else %}
NAMESPACE: str | None = None
{%- endif %}


def sample() -> {{ cookiecutter.kind }}:
    obj = {{ cookiecutter.kind }}.model_validate(yaml.safe_load(SAMPLE.read_text()))
    obj.metadata.namespace = NAMESPACE
    return obj


async def test_{{ cookiecutter.kind_module }}_is_created_read_and_listed_through_the_aggregator(
    test_api_server: TestAPIServer,
) -> None:
    async with (
        AggregatedServer.for_testing(GROUP_VERSIONS, test_api_server),
        Client(test_api_server.client_config()) as client,
    ):
        created = await client.create(sample())
        read = await client.get({{ cookiecutter.kind }}, created.metadata.name, NAMESPACE)
        listed = await client.list({{ cookiecutter.kind }}, namespace=NAMESPACE)

    assert created.metadata.uid and created.metadata.resource_version
    assert read.metadata.uid == created.metadata.uid and read.spec == created.spec
    assert [item.metadata.name for item in listed.items] == [created.metadata.name]


async def test_{{ cookiecutter.kind_module }}_is_denied_to_a_user_rbac_does_not_allow(
    test_api_server: TestAPIServer,
) -> None:
    test_api_server.add_user("nobody-token", "nobody")
    async with (
        AggregatedServer.for_testing(GROUP_VERSIONS, test_api_server),
        Client(test_api_server.client_config(token="nobody-token")) as client,
    ):
        with pytest.raises(ForbiddenError):
            await client.list({{ cookiecutter.kind }}, namespace=NAMESPACE)
{%- if cookiecutter.certificates == "pyop" %}


async def test_{{ cookiecutter.kind_module }}_is_served_with_the_servers_own_certificate(
    test_api_server: TestAPIServer,
) -> None:
    """--certificates=pyop: the server makes its certificate, keeps it in a Secret and injects its CA into its
    APIServices, registered here without one; the test server's kube-aggregator verifies the server with it."""
    options = RecommendedOptions()
    options.secure_serving.serving_cert_secret = "apiserver-serving-cert"
    options.secure_serving.serving_cert_namespace = "default"
    options.secure_serving.serving_cert_service = "apiserver"  # the Service every APIService below names
    options.secure_serving.rotate_interval = 0.2  # the CA goes into APIServices made after the server started
    async with (
        AggregatedServer.for_testing(GROUP_VERSIONS, test_api_server, options=options, register=False) as server,
        Client(test_api_server.client_config()) as client,
    ):
        for group_version in GROUP_VERSIONS:
            await test_api_server.register_api_service(
                group_version.group, group_version.version, server.url, service_name="apiserver"
            )
        for _ in range(200):  # until the CA is injected and the aggregator has read the server's discovery
            try:
                listed = await client.list({{ cookiecutter.kind }}, namespace=NAMESPACE)
                break
            except ApiError:
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("the server was not reached through the aggregator with its own certificate")
    assert listed.items == []
{%- endif %}
