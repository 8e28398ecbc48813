"""The built-in resources the test API server serves, derived per Kubernetes version (`catalog`)."""
