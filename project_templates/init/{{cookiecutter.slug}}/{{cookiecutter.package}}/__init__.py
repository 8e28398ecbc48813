{{ cookiecutter.license_header }}"""The {{ cookiecutter.project_name }} operator."""
