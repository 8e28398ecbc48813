{{ cookiecutter.license_header }}"""API packages: one per {% if cookiecutter.multigroup %}group and {% endif %}version, holding the models of the kinds this operator serves."""
