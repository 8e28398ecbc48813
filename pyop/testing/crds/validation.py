"""Admission of custom resources against their CRD schema: the generic registry's (`pyop.apiserver.registry.schema`),
named here for the test server's modules and its tests."""

from pyop.apiserver.registry.schema import CAUSE_REASONS, admit, cause_from_field_error

__all__ = ["CAUSE_REASONS", "admit", "cause_from_field_error"]
