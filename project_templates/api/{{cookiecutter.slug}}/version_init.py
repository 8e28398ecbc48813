{{ cookiecutter.license_header }}"""The {{ cookiecutter.version }} API of the {{ cookiecutter.qualified_group }} group (see groupversion_info.py)."""
