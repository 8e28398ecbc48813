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
{%- if cookiecutter.namespaced %}
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
