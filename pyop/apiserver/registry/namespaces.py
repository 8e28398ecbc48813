"""Whether a namespace can take new objects: it exists and is not being terminated.

kube's NamespaceLifecycle admission refuses creates in a namespace that is missing (404) or terminating (403
``NamespaceTerminating``), and kube-controller-manager's controllers that fill namespaces (the default
ServiceAccount, the root CA ConfigMap) skip such a namespace rather than fight its deletion. The registry and the
test server's controllers ask this one function, so they agree on what "terminating" means: a deletion has been
asked for (``metadata.deletionTimestamp`` set; the namespace's ``status.phase`` becomes ``Terminating`` with it),
whatever finalizers still hold the object.
"""

from __future__ import annotations

from typing import Literal

from pyop.apiserver.storage.store import Store

NamespaceState = Literal["live", "missing", "terminating"]


def namespace_state(store: Store, namespace: str) -> NamespaceState:
    """``live`` when ``namespace`` is stored and no deletion was asked for; else ``missing`` or ``terminating``."""
    stored = store.get("namespaces", "", namespace)
    if stored is None:
        return "missing"
    return "terminating" if stored["metadata"].get("deletionTimestamp") else "live"


__all__ = ["NamespaceState", "namespace_state"]
