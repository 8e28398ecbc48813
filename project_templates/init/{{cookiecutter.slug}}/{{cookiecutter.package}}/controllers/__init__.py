{{ cookiecutter.license_header }}"""Reconcilers: one per kind; their `+kubebuilder:rbac` markers become config/rbac/role.yaml."""
