{%- set names = [] -%}
{%- if cookiecutter.defaulting %}{% set names = names + ["defaulting"] %}{% endif -%}
{%- if cookiecutter.validation %}{% set names = names + ["validation"] %}{% endif -%}
{%- if cookiecutter.conversion %}{% set names = names + ["conversion"] %}{% endif -%}
{{ cookiecutter.license_header }}"""{{ ((names[:-1] | join(", ") ~ " and " ~ names[-1]) if names | length > 1 else names[0]) | capitalize }} webhook{{ "s" if names | length > 1 }} of the {{ cookiecutter.version }} {{ cookiecutter.kind }} API.

{% if cookiecutter.defaulting or cookiecutter.validation -%}
The `+kubebuilder:webhook` markers below become config/webhook/manifests.yaml when you run `make manifests`.
{% endif -%}
{% if cookiecutter.conversion -%}
The conversion webhook converts between this hub version and {{ cookiecutter.spokes.replace(",", ", ") }} through the
`convert_to`/`convert_from` methods of each spoke's model, which you fill in.
{% endif -%}
The manager serves these webhooks over HTTPS; `{{ cookiecutter.setup_function }}` is called from main.py
unless ENABLE_WEBHOOKS=false (as `make run` sets it, since a local run has no serving certificate).
"""

from __future__ import annotations

import logging

{{ cookiecutter.module_imports }}

log = logging.getLogger(__name__)

# TODO(user): EDIT THIS FILE! THIS IS SCAFFOLDING FOR YOU TO OWN!
{%- if cookiecutter.defaulting %}


# +kubebuilder:webhook:path={{ cookiecutter.defaulting_path }},mutating=true,failurePolicy=fail,sideEffects=None,groups={{ cookiecutter.webhook_group }},resources={{ cookiecutter.plural }},verbs=create;update,versions={{ cookiecutter.version }},name=m{{ cookiecutter.kind_lower }}-{{ cookiecutter.version }}.kb.io,admissionReviewVersions=v1


class {{ cookiecutter.kind }}Defaulter:
    """Sets default values on a {{ cookiecutter.kind }} when it is created or updated.

    The webhook answers with a JSON patch between the object it received and the one `default` leaves behind;
    fields the model does not know are never removed.
    """

    # TODO(user): add fields the defaulter needs (a client, settings), and pass them in the setup function below.

    async def default(self, obj: {{ cookiecutter.kind }}) -> None:
        log.info("defaulting %s %s", "{{ cookiecutter.kind }}", obj.metadata.name)
        # TODO(user): fill in your defaulting logic: change `obj` in place.
{%- endif %}
{%- if cookiecutter.validation %}


# TODO(user): change verbs to "verbs=create;update;delete" to validate deletions too.
# NOTE: the path must match the one the webhook is served on (see the setup function); the API server cannot
# reach the webhook otherwise.
# +kubebuilder:webhook:path={{ cookiecutter.validation_path }},mutating=false,failurePolicy=fail,sideEffects=None,groups={{ cookiecutter.webhook_group }},resources={{ cookiecutter.plural }},verbs=create;update,versions={{ cookiecutter.version }},name=v{{ cookiecutter.kind_lower }}-{{ cookiecutter.version }}.kb.io,admissionReviewVersions=v1


class {{ cookiecutter.kind }}Validator:
    """Checks a {{ cookiecutter.kind }} on create, update and delete, beyond what its OpenAPI schema can say.

    Raise `pyop.webhook.AdmissionDenied("spec.field: why")` to reject the request (kubectl shows the message);
    return warnings to accept it with a notice.
    """

    # TODO(user): add fields the validator needs (a client, settings), and pass them in the setup function below.

    async def validate_create(self, obj: {{ cookiecutter.kind }}) -> Warnings:
        log.info("validating creation of %s %s", "{{ cookiecutter.kind }}", obj.metadata.name)
        # TODO(user): fill in your validation logic for creation.
        return []

    async def validate_update(self, old: {{ cookiecutter.kind }}, new: {{ cookiecutter.kind }}) -> Warnings:
        log.info("validating update of %s %s", "{{ cookiecutter.kind }}", new.metadata.name)
        # TODO(user): fill in your validation logic for updates.
        return []

    async def validate_delete(self, obj: {{ cookiecutter.kind }}) -> Warnings:
        log.info("validating deletion of %s %s", "{{ cookiecutter.kind }}", obj.metadata.name)
        # TODO(user): fill in your validation logic for deletion (and add `delete` to the marker's verbs).
        return []
{%- endif %}


def {{ cookiecutter.setup_function }}(manager: Manager) -> None:
    """Register the {{ cookiecutter.kind }} webhooks with the manager."""
    (
        manager.webhook_for({{ cookiecutter.kind }})
{%- if cookiecutter.defaulting %}
        .with_defaulter({{ cookiecutter.kind }}Defaulter())
{%- if cookiecutter.custom_defaulting_path %}
        .with_defaulting_path("{{ cookiecutter.defaulting_path }}")
{%- endif %}
{%- endif %}
{%- if cookiecutter.validation %}
        .with_validator({{ cookiecutter.kind }}Validator())
{%- if cookiecutter.custom_validation_path %}
        .with_validation_path("{{ cookiecutter.validation_path }}")
{%- endif %}
{%- endif %}
{%- if cookiecutter.conversion %}
        .with_conversion(hub={{ cookiecutter.kind }}, spokes=[
{%- for spoke in cookiecutter.spokes.split(",") if spoke %}{{ cookiecutter.kind }}{{ spoke.capitalize() }}{{ ", " if not loop.last }}{% endfor %}])
{%- endif %}
        .complete()
    )
