"""apiextensions-apiserver for the test API server: CR schema admission, version conversion, ready-made CRDs.

`schemaless_crd` is re-exported because tests import it from here (`from pyop.testing.crds import schemaless_crd`).
"""

from pyop.testing.crds.ready_made import schemaless_crd

__all__ = ["schemaless_crd"]
