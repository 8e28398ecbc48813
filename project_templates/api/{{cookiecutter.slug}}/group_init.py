{{ cookiecutter.license_header }}"""API versions of the {{ cookiecutter.qualified_group }} group."""
