{{ cookiecutter.license_header }}"""Versions of the {{ cookiecutter.qualified_group }} group, served by the aggregated API server."""
