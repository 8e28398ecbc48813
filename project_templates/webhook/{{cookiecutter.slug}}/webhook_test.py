{{ cookiecutter.license_header }}"""Tests of the {{ cookiecutter.version }} {{ cookiecutter.kind }} webhooks, calling them directly (no webhook server needed).

They start from the sample in config/samples; add a case for every rule you write in {{ cookiecutter.webhook_module.rpartition(".")[2] }}.py.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pyop.manager import Manager, ManagerOptions

{{ cookiecutter.api_imports }}
from {{ cookiecutter.webhook_module }} import {% if cookiecutter.defaulting %}{{ cookiecutter.kind }}Defaulter, {% endif %}{% if cookiecutter.validation %}{{ cookiecutter.kind }}Validator, {% endif %}{{ cookiecutter.setup_function }}

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLE = PROJECT_ROOT / "{{ cookiecutter.sample_file }}"


def sample() -> {{ cookiecutter.kind }}:
    return {{ cookiecutter.kind }}.model_validate(yaml.safe_load(SAMPLE.read_text()))


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
    hub = sample()
    converted = {{ cookiecutter.kind }}{{ spoke.capitalize() }}.convert_from(hub)
    assert converted.api_version == "{{ cookiecutter.qualified_group }}/{{ spoke }}"
    assert converted.metadata == hub.metadata
    # TODO(user): once the conversion copies spec and status, compare the whole object: `== hub`.
    assert converted.convert_to().metadata == hub.metadata
{%- endfor %}
