"""Offline API-server acceptance check of generated CRDs (``docs/reference/acceptance-check.md``).

``check_crd(crd)`` returns the field errors kube-apiserver would answer a create of ``crd``
with (``[]`` means it would be accepted); ``format_errors`` renders them like kubectl shows
them. Schema values (defaults) are validated with ``pyop.schema``, the same code the test API
server uses for custom resources.
"""

from pyop.schema.errors import FieldError
from pyop_scaffold.manifests.acceptance.check import check_crd, format_errors
from pyop_scaffold.manifests.acceptance.paths import PathStyle

__all__ = ["FieldError", "PathStyle", "check_crd", "format_errors"]
