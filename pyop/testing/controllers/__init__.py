"""The control-plane controllers the test API server runs: CRD serving, garbage collection, namespaces, RBAC."""
