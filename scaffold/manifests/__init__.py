"""The manifest generator (controller-gen's job): models and markers in, CRDs and RBAC roles out."""
