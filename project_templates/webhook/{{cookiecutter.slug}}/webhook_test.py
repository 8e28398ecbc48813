{{ cookiecutter.license_header }}"""Tests of the {{ cookiecutter.version }} {{ cookiecutter.kind }} webhooks: called directly, and{% if cookiecutter.defaulting or cookiecutter.validation %} end to end through
pyop's test API server, which calls them as config/webhook/manifests.yaml tells it (as a cluster would){% else %} their paths{% endif %}.

They start from {% if cookiecutter.foreign %}SAMPLE below{% else %}the sample in config/samples{% endif %}; add a case for every rule you write in {{ cookiecutter.webhook_module.rpartition(".")[2] }}.py.
"""

from __future__ import annotations

from pathlib import Path

{%- if cookiecutter.external %}
from typing import Any
{%- endif %}

{{ cookiecutter.test_imports }}

PROJECT_ROOT = Path(__file__).resolve().parent.parent
{%- if cookiecutter.foreign %}
# TODO(user): the smallest {{ cookiecutter.kind }} its schema accepts; make it one your webhooks act on.
SAMPLE = {{ cookiecutter.sample_object }}
{%- else %}
SAMPLE = PROJECT_ROOT / "{{ cookiecutter.sample_file }}"
{%- endif %}
{%- if (cookiecutter.defaulting or cookiecutter.validation) and not cookiecutter.foreign %}
CRD_DIR = PROJECT_ROOT / "config" / "crd" / "bases"
{%- endif %}
{%- if cookiecutter.defaulting or cookiecutter.validation %}
WEBHOOK_MANIFESTS = PROJECT_ROOT / "config" / "webhook" / "manifests.yaml"
{%- endif %}


def sample() -> {{ cookiecutter.kind }}:
{%- if cookiecutter.foreign %}
    return {{ cookiecutter.kind }}.model_validate(SAMPLE)
{%- else %}
    return {{ cookiecutter.kind }}.model_validate(yaml.safe_load(SAMPLE.read_text()))
{%- endif %}
{%- if cookiecutter.external and (cookiecutter.defaulting or cookiecutter.validation) %}


def stand_in_crd() -> dict[str, Any]:
    """A CRD serving {{ cookiecutter.kind }} with any content, for a test server that has no {{ cookiecutter.kind }} CRD
    (TODO(user): load the real CRD instead, `test_api_server.load_crds(path)`)."""
    info = {{ cookiecutter.kind }}.resource_info
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{info.plural}.{info.group}"},
        "spec": {
            "group": info.group,
            "names": {"kind": info.kind, "plural": info.plural, "listKind": f"{info.kind}List"},
            "scope": "Namespaced" if info.namespaced else "Cluster",
            "versions": [
                {
                    "name": info.version,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
{%- endif %}


def test_setup_serves_the_paths_of_the_markers() -> None:
    """The paths registered with the manager are those the +kubebuilder:webhook markers give the API server."""
    manager = Manager(ManagerOptions(handle_signals=False))
    {{ cookiecutter.setup_function }}(manager)
    expected = {
{%- if cookiecutter.defaulting %}
        "{{ cookiecutter.defaulting_path }}",
{%- endif %}
{%- if cookiecutter.validation %}
        "{{ cookiecutter.validation_path }}",
{%- endif %}
{%- if cookiecutter.conversion %}
        "/convert",
{%- endif %}
    }
    assert expected <= set(manager.get_webhook_server().endpoints)
{%- if cookiecutter.defaulting or cookiecutter.validation %}


async def test_the_api_server_calls_the_webhooks_when_the_sample_is_created(
    test_api_server: TestAPIServer, tmp_path: Path
) -> None:
    """The manager serves the webhooks over HTTPS; the test API server, given config/webhook/manifests.yaml,
    calls them on create and admits the sample."""
{%- if cookiecutter.foreign %}
    if not WEBHOOK_MANIFESTS.is_file():
        pytest.fail("no config/webhook/manifests.yaml: run `make manifests` first")
{%- if cookiecutter.external %}
    test_api_server.add_crd(stand_in_crd())
{%- endif %}
{%- else %}
    if not WEBHOOK_MANIFESTS.is_file() or not list(CRD_DIR.glob("*.yaml")):
        pytest.fail("no config/webhook/manifests.yaml or CRDs: run `make manifests` first")
    test_api_server.load_crds(CRD_DIR)
{%- endif %}
    certificate, _ = write_self_signed_certificate(tmp_path, ["127.0.0.1"])
    manager = Manager(
        ManagerOptions(
            kubeconfig=test_api_server.kubeconfig_path,
            handle_signals=False,
            webhook_host="127.0.0.1",
            webhook_port=0,
            webhook_cert_path=str(tmp_path),
        )
    )
    {{ cookiecutter.setup_function }}(manager)
    obj = sample()
{%- if cookiecutter.external %}
    if {{ cookiecutter.kind }}.resource_info.namespaced:
        obj.metadata.namespace = obj.metadata.namespace or "default"
{%- elif cookiecutter.namespaced %}
    obj.metadata.namespace = obj.metadata.namespace or "default"
{%- endif %}
    async with manager:
        test_api_server.install_webhooks(WEBHOOK_MANIFESTS, url=manager.get_webhook_server().url, ca_bundle=certificate)
        created = await manager.client.create(obj)
    assert created.metadata.name == obj.metadata.name
    # TODO(user): assert what your defaulter set on `created`; create an invalid object and expect
    # `pyop.client.ForbiddenError` with the validator's message.
    served = manager.metrics.registry
    for path in expected_admission_paths():
        assert served.get_sample_value("controller_runtime_webhook_requests_total", {"webhook": path, "code": "200"}) == 1


def expected_admission_paths() -> list[str]:
    return [
{%- if cookiecutter.defaulting %}
        "{{ cookiecutter.defaulting_path }}",
{%- endif %}
{%- if cookiecutter.validation %}
        "{{ cookiecutter.validation_path }}",
{%- endif %}
    ]
{%- endif %}
{%- if cookiecutter.defaulting %}


async def test_defaulting_keeps_the_sample_a_valid_{{ cookiecutter.kind_module }}() -> None:
    obj = sample()
    await {{ cookiecutter.kind }}Defaulter().default(obj)
    # TODO(user): assert the defaults your defaulter sets, e.g. `assert obj.spec.replicas == 1`.
    assert obj.metadata.name == sample().metadata.name
    assert {{ cookiecutter.kind }}.model_validate(obj.to_dict()) == obj
{%- endif %}
{%- if cookiecutter.validation %}


async def test_validation_accepts_the_sample() -> None:
    validator = {{ cookiecutter.kind }}Validator()
    assert await validator.validate_create(sample()) == []
    assert await validator.validate_update(sample(), sample()) == []
    assert await validator.validate_delete(sample()) == []
    # TODO(user): for each rule, change the sample so it breaks the rule and check the denial:
    #     with pytest.raises(pyop.webhook.AdmissionDenied, match="spec.size"):
    #         await validator.validate_create(invalid)
{%- endif %}
{%- for spoke in cookiecutter.spokes.split(",") if spoke %}


def test_{{ spoke }}_round_trips_through_the_hub() -> None:
    """The hub's sample, converted to {{ spoke }} and back, is what it was: no field is lost on the way."""
    hub = sample()
    converted = {{ cookiecutter.kind }}{{ spoke.capitalize() }}.convert_from(hub)
    assert converted.api_version == "{{ cookiecutter.qualified_group }}/{{ spoke }}"
    assert converted.metadata == hub.metadata
    assert converted.convert_to() == hub
    # TODO(user): once the versions differ, also check the translated fields of `converted`.
{%- endfor %}
{%- if cookiecutter.conversion %}


VERSIONS = {
    "{{ cookiecutter.version }}": {{ cookiecutter.kind }},
{%- for spoke in cookiecutter.spokes.split(",") if spoke %}
    "{{ spoke }}": {{ cookiecutter.kind }}{{ spoke.capitalize() }},
{%- endfor %}
}
SPOKES = [model for model in VERSIONS.values() if model is not {{ cookiecutter.kind }}]
CRD_BASES = PROJECT_ROOT / "config" / "crd" / "bases"


def test_random_objects_of_every_version_round_trip_through_the_hub() -> None:
    """Objects drawn from each version's schema in the generated CRD (every field, not only the sample's), as the
    API server stores them: a spoke converted to the hub and back, and the hub to each spoke and back, is what it
    was. A field a conversion forgets fails here with the smallest object that shows it."""
    from pyop.testing.schema_objects import crd_version_schema, objects

    for version, model in VERSIONS.items():
        schema = crd_version_schema(CRD_BASES, "{{ cookiecutter.crd_name }}", version)
        drawn = objects(
            schema,
            api_version=f"{{ cookiecutter.qualified_group }}/{version}",
            kind="{{ cookiecutter.kind }}",
            namespace={% if cookiecutter.namespaced %}"default"{% else %}None{% endif %},
        )
        check_round_trips(model, drawn)


def check_round_trips(model: type, drawn: object) -> None:
    try:
        from hypothesis import HealthCheck, given, settings
    except ImportError:  # pytest reports a skip
        import unittest

        raise unittest.SkipTest("the round-trip property test needs hypothesis: pip install hypothesis") from None

    @settings(max_examples=50, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(drawn)
    def round_trip(obj: dict[str, object]) -> None:
        original = model.model_validate(obj)
        if model is {{ cookiecutter.kind }}:
            for spoke in SPOKES:
                assert spoke.convert_from(original).convert_to().to_dict() == original.to_dict()
        else:
            assert model.convert_from(original.convert_to()).to_dict() == original.to_dict()

    round_trip()


async def test_the_api_server_serves_every_version_through_the_conversion_webhook(
    test_api_server, tmp_path: Path  # the pyop.testing fixture: a TestAPIServer
) -> None:
    """With the CRD's conversion webhook on (config/crd/patches), the test API server calls the manager's
    /convert whenever a version other than the stored one is read or written, as kube-apiserver does."""
    import pyop.manager.certificates

    crd = next(
        document
        for path in sorted(CRD_BASES.glob("*.yaml"))
        for document in yaml.safe_load_all(path.read_text())
        if isinstance(document, dict) and document.get("metadata", {}).get("name") == "{{ cookiecutter.crd_name }}"
    )
    crd["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {"service": {"namespace": "system", "name": "webhook-service", "path": "/convert"}},
            "conversionReviewVersions": ["v1"],
        },
    }
    test_api_server.add_crd(crd)
    certificate, _ = pyop.manager.certificates.write_self_signed_certificate(tmp_path, ["127.0.0.1"])
    manager = Manager(
        ManagerOptions(
            kubeconfig=test_api_server.kubeconfig_path,
            handle_signals=False,
            webhook_host="127.0.0.1",
            webhook_port=0,
            webhook_cert_path=str(tmp_path),
        )
    )
    {{ cookiecutter.setup_function }}(manager)
    hub = sample()
{%- if cookiecutter.namespaced %}
    hub.metadata.namespace = hub.metadata.namespace or "default"
{%- endif %}
    async with manager:
        test_api_server.install_webhooks([], url=manager.get_webhook_server().url, ca_bundle=certificate)
        created = await manager.client.create(hub)
        for spoke in SPOKES:
            read = await manager.client.get(spoke, created.metadata.name or "", created.metadata.namespace)
            assert read.to_dict()["spec"] == spoke.convert_from(created).to_dict()["spec"]
            written = spoke.convert_from(hub)
            written.metadata.name = f"{hub.metadata.name}-{spoke.resource_info.version}"
            stored = await manager.client.create(written)
            back = await manager.client.get({{ cookiecutter.kind }}, stored.metadata.name or "", stored.metadata.namespace)
            assert back.to_dict()["spec"] == written.convert_to().to_dict()["spec"]
    served = manager.metrics.registry
    assert served.get_sample_value("controller_runtime_webhook_requests_total", {"webhook": "/convert", "code": "200"})
{%- endif %}
