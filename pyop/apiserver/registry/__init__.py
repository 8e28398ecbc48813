"""The registry: resource types, per-kind strategies and the generic store operations with Kubernetes semantics."""
