{{ cookiecutter.license_header }}"""Controllers of the {{ cookiecutter.qualified_group }} group."""
