{{ cookiecutter.license_header }}"""Webhooks of this project (Kubebuilder's internal/webhook), one module per kind and version."""
