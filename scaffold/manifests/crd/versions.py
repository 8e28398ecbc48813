"""Kubernetes' order of API versions for a CRD's `spec.versions`: `pyop.api.versions` (the servers' order too)."""

from __future__ import annotations

from pyop.api.versions import sort_versions

__all__ = ["sort_versions"]
