"""The breaking-change gate of `pyop make manifests --check-compat[=REF]`: new CRDs against the previous ones.

`baseline` reads the previous CRDs (a git ref's `config/crd/bases`, or a file or folder of YAML); `compare` lists,
in the API server's terms, the changes that break objects already stored or clients already written.
"""

from pyop_scaffold.manifests.compat.baseline import load_baseline
from pyop_scaffold.manifests.compat.compare import breaking_changes

__all__ = ["breaking_changes", "load_baseline"]
